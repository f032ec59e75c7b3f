/** The figures derived from a run's measured parts: store capacity, ratios, and the goals of issue 5. */
import type { PhaseSummary } from "../clients/protocol";
import type { BenchResult, Goal, Measured, PerAttempt } from "../measure/measures";
import { round } from "./table";

/** Upstash's cap on one database, commands per second. */
export const UPSTASH_COMMANDS_PER_SECOND = 10_000;

const ratio = (a: number | undefined | null, b: number | undefined | null) =>
  a && b ? round(a / b, 2) : null;

function overallPerSecond(load: { attempts: number; phases: PhaseSummary[] }): number {
  const ms = load.phases.reduce((sum, p) => sum + p.durationMs, 0);
  return ms > 0 ? Math.round((load.attempts / ms) * 1000) : 0;
}

const phase = (list: Measured[] | undefined, name: string) => list?.find((m) => m.phase.phase === name);

/** The parts the derived figures are read from. */
function parts(r: BenchResult) {
  return {
    reserve: r.probes.find((p) => p.expect === "202" && p.name.startsWith("reserve")),
    bloom: r.probes.find((p) => p.expect === "404 UNKNOWN_PRODUCT"),
    soldOutWarm: r.probes.find((p) => p.name === "sold out, warm isolate"),
    rush: phase(r.project.phases, "rush"),
    after: phase(r.project.phases, "after"),
    naiveRush: phase(r.naive?.phases, "rush"),
    naiveAfter: phase(r.naive?.phases, "after"),
    direct: r.redisDirect.find((d) => d.path === "reserve" && d.pipeline === 1),
    directPipelined: r.redisDirect.find((d) => d.path === "reserve" && d.pipeline > 1),
    hotRow: r.hotRows.length ? Math.max(...r.hotRows.map((h) => h.perSecond)) : null,
  };
}
type Parts = ReturnType<typeof parts>;

/** Fills in capacity, ratios and goals from the measured parts. */
export function summarizeResult(r: BenchResult): BenchResult {
  const p = parts(r);
  r.capacity = capacity(p);
  r.ratios = ratios(r, p);
  r.goals = goals(r, p);
  return r;
}

function capacity({ reserve, rush, after, direct, directPipelined, hotRow, naiveRush }: Parts) {
  const perCmd = (p: PerAttempt | undefined) =>
    p && p.scripts > 0 ? Math.round(UPSTASH_COMMANDS_PER_SECOND / p.scripts) : null;
  const perMicros = (us: number | undefined | null) => (us ? Math.round(1e6 / us) : null);
  return {
    upstashAttemptsPerSecondAdmitted: perCmd(reserve?.per),
    upstashAttemptsPerSecondRushMix: perCmd(rush?.per),
    upstashAttemptsPerSecondAfterMix: perCmd(after?.per),
    redisCoreAttemptsPerSecondByExecTime: perMicros(reserve?.per.scriptMicros),
    redisCoreAttemptsPerSecondByCpu: perMicros(reserve?.per.redisCpuMicros),
    redisDirectScriptsPerSecond: direct?.perSecond ?? null,
    redisDirectScriptsPerSecondPipelined: directPipelined?.perSecond ?? null,
    postgresHotRowPerSecond: hotRow, // the better of the two connection counts
    naiveRushPerSecond: naiveRush?.phase.attemptsPerSecond ?? null,
  };
}

function ratios(r: BenchResult, { rush, after, naiveRush, naiveAfter, direct, hotRow }: Parts) {
  const noopOverall = r.noop ? overallPerSecond(r.noop.load) : null;
  return {
    projectOverNaiveRush: ratio(rush?.phase.attemptsPerSecond, naiveRush?.phase.attemptsPerSecond),
    projectOverNaiveAfter: ratio(after?.phase.attemptsPerSecond, naiveAfter?.phase.attemptsPerSecond),
    projectOverNoopOverall: ratio(overallPerSecond(r.project.load), noopOverall),
    projectOverNoopAfter: ratio(after?.phase.attemptsPerSecond, noopOverall),
    storeRedisScriptOverPostgresHotRow: ratio(direct?.perSecond, hotRow),
    storeRedisCoreCpuOverPostgresHotRow: ratio(r.capacity.redisCoreAttemptsPerSecondByCpu, hotRow),
  };
}

const goal = (g: string, measured: string, met: boolean): Goal => ({ goal: g, measured, met });

function goals(r: BenchResult, p: Parts): Goal[] {
  return [...storeGoals(r, p), ...endToEndGoals(r, p)];
}

/** What the store is asked per attempt, and what it carries. */
function storeGoals(r: BenchResult, { reserve, bloom, soldOutWarm }: Parts): Goal[] {
  return [
    goal(
      "one Redis command per admitted attempt",
      `${reserve?.per.scripts ?? "?"} EVALSHA per admitted attempt`,
      (reserve?.per.scripts ?? 9) <= 1.01,
    ),
    goal(
      "none for a Bloom miss",
      `${bloom ? round(bloom.per.scripts + bloom.per.otherCommands, 3) : "?"} per attempt`,
      bloom ? bloom.per.scripts + bloom.per.otherCommands < 0.01 : false,
    ),
    goal(
      "none after sell-out in a warm isolate",
      `${soldOutWarm?.per.scripts ?? "?"} per attempt`,
      (soldOutWarm?.per.scripts ?? 9) < 0.01,
    ),
    goal(
      "store capacity >= 10x the Postgres hot row",
      `${r.ratios.storeRedisScriptOverPostgresHotRow ?? "?"}x`,
      (r.ratios.storeRedisScriptOverPostgresHotRow ?? 0) >= 10,
    ),
  ];
}

/** Throughput, latency and CPU end to end, and the invariant. */
function endToEndGoals(r: BenchResult, { reserve, rush, after }: Parts): Goal[] {
  const p99s = [rush, after].filter(Boolean).map((m) => (m as Measured).phase.latency.p99);
  const workerCpu = [reserve?.per.workerCpuMicros, rush?.per.workerCpuMicros, after?.per.workerCpuMicros];
  return [
    goal(
      "end to end >= 2x naive during the rush",
      `${r.ratios.projectOverNaiveRush ?? "?"}x`,
      (r.ratios.projectOverNaiveRush ?? 0) >= 2,
    ),
    goal(
      "end to end >= 5x naive after sell-out",
      `${r.ratios.projectOverNaiveAfter ?? "?"}x`,
      (r.ratios.projectOverNaiveAfter ?? 0) >= 5,
    ),
    goal(
      "p99 under 100 ms",
      `rush ${p99s[0] ?? "?"} ms, after ${p99s[1] ?? "?"} ms`,
      p99s.length > 0 && p99s.every((p) => p < 100),
    ),
    goal(
      "<= 1 ms worker CPU per attempt",
      `admitted ${workerCpu[0] ?? "?"} µs, rush ${workerCpu[1] ?? "?"} µs, after ${workerCpu[2] ?? "?"} µs`,
      workerCpu.every((c) => c !== undefined && c !== null && c <= 1000),
    ),
    goal(
      ">= half the no-op route's throughput",
      `${r.ratios.projectOverNoopOverall ?? "?"}x (whole crowd)`,
      (r.ratios.projectOverNoopOverall ?? 0) >= 0.5,
    ),
    goal(
      "zero oversell, zero lost orders",
      `${r.checks.filter((c) => c.ok).length}/${r.checks.length} checks`,
      r.checks.every((c) => c.ok),
    ),
  ];
}
