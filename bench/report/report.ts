/** Derived figures (capacity, ratios, goals) and the terminal report. */

import type { PhaseSummary } from "../clients/protocol";
import type { BenchResult, Goal, Measured, PerAttempt } from "../measure/measures";

const UPSTASH_COMMANDS_PER_SECOND = 10_000;
const round = (v: number, digits = 1) => Math.round(v * 10 ** digits) / 10 ** digits;
const ratio = (a: number | undefined | null, b: number | undefined | null) =>
  a && b ? round(a / b, 2) : null;

function overallPerSecond(load: { attempts: number; phases: PhaseSummary[] }): number {
  const ms = load.phases.reduce((sum, p) => sum + p.durationMs, 0);
  return ms > 0 ? Math.round((load.attempts / ms) * 1000) : 0;
}

const phase = (list: Measured[] | undefined, name: string) => list?.find((m) => m.phase.phase === name);

/** Fills in capacity, ratios and goals from the measured parts. */
export function summarizeResult(r: BenchResult): BenchResult {
  const reserve = r.probes.find((p) => p.expect === "202" && p.name.startsWith("reserve"));
  const bloom = r.probes.find((p) => p.expect === "404 UNKNOWN_PRODUCT");
  const soldOutWarm = r.probes.find((p) => p.name === "sold out, warm isolate");
  const rush = phase(r.project.phases, "rush");
  const after = phase(r.project.phases, "after");
  const naiveRush = phase(r.naive?.phases, "rush");
  const naiveAfter = phase(r.naive?.phases, "after");
  const direct = r.redisDirect.find((d) => d.path === "reserve" && d.pipeline === 1);
  const directPipelined = r.redisDirect.find((d) => d.path === "reserve" && d.pipeline > 1);
  const perCmd = (p: PerAttempt | undefined) =>
    p && p.scripts > 0 ? Math.round(UPSTASH_COMMANDS_PER_SECOND / p.scripts) : null;
  const perMicros = (us: number | undefined | null) => (us ? Math.round(1e6 / us) : null);
  const hotRow = r.hotRows.length ? Math.max(...r.hotRows.map((h) => h.perSecond)) : null;
  const projectOverall = overallPerSecond(r.project.load);
  const noopOverall = r.noop ? overallPerSecond(r.noop.load) : null;

  r.capacity = {
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
  r.ratios = {
    projectOverNaiveRush: ratio(rush?.phase.attemptsPerSecond, naiveRush?.phase.attemptsPerSecond),
    projectOverNaiveAfter: ratio(after?.phase.attemptsPerSecond, naiveAfter?.phase.attemptsPerSecond),
    projectOverNoopOverall: ratio(projectOverall, noopOverall),
    projectOverNoopAfter: ratio(after?.phase.attemptsPerSecond, noopOverall),
    storeRedisScriptOverPostgresHotRow: ratio(direct?.perSecond, hotRow),
    storeRedisCoreCpuOverPostgresHotRow: ratio(r.capacity.redisCoreAttemptsPerSecondByCpu, hotRow),
  };
  const p99s = [rush, after].filter(Boolean).map((m) => (m as Measured).phase.latency.p99);
  const workerCpu = [reserve?.per.workerCpuMicros, rush?.per.workerCpuMicros, after?.per.workerCpuMicros];
  const goal = (g: string, measured: string, met: boolean): Goal => ({ goal: g, measured, met });
  r.goals = [
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
  return r;
}

export type Cell = string | number | null | undefined;

export function table(head: string[], rows: Cell[][]): string {
  const text = (c: Cell) =>
    c === null || c === undefined ? "–" : typeof c === "number" ? c.toLocaleString("en-US") : c;
  const all = [head, ...rows.map((row) => row.map(text))];
  const width = head.map((_, i) => Math.max(...all.map((row) => (row[i] ?? "").length)));
  const line = (row: string[]) =>
    row.map((c, i) => (i === 0 ? c.padEnd(width[i] ?? 0) : c.padStart(width[i] ?? 0))).join("  ");
  return [line(head), line(head.map((_, i) => "─".repeat(width[i] ?? 0))), ...all.slice(1).map(line)]
    .map((l) => `  ${l}`)
    .join("\n");
}

const ms = (v: number) => round(v, 1);
const costCells = (p: PerAttempt): Cell[] => [
  p.scripts,
  p.otherCommands,
  p.scriptMicros,
  p.redisCpuMicros,
  p.workerCpuMicros,
  p.standInsCpuMicros,
];
const COST_HEAD = ["EVALSHA", "other cmds", "script µs", "redis CPU µs", "worker CPU µs", "stand-ins CPU µs"];

export function printReport(r: BenchResult): void {
  const out = (s = "") => console.log(s);
  const m = r.meta;
  out(`\n══ flash-sale benchmark · ${m.date} ══`);
  out(
    `machine: ${m.machine.cpus} × ${m.machine.model}, ${m.machine.memoryGb} GB · Node ${m.node} · redis ${m.redis} · Postgres ${m.postgres.version} (fsync ${m.postgres.fsync}, synchronous_commit ${m.postgres.synchronousCommit})`,
  );
  out(`worker: ${m.worker}`);
  out(
    `load average (1/5/15 min): ${m.loadAverage.atStart.join(" ")} at start, ${m.loadAverage.atEnd.join(" ")} at end (${m.machine.cpus} cores: above ${m.machine.cpus} means other work competed)`,
  );
  out(
    `crowd: ${m.users.toLocaleString("en-US")} users, ${r.project.load.attempts.toLocaleString("en-US")} attempts, seed ${m.seed}, ${m.concurrency} connections · limits ${JSON.stringify(m.limits)}`,
  );

  out(
    `\nEnd to end: same crowd, same load generator (separate process), same connections, ${m.rate > 0 ? `open loop at ${m.rate}/s (latency from each attempt's slot)` : "closed loop"}`,
  );
  const e2e: Cell[][] = [];
  const addRun = (name: string, list: Measured[], server: (p: PerAttempt) => number | null) => {
    for (const { phase: p, per: c } of list)
      e2e.push([
        name,
        p.phase,
        p.attempts,
        p.durationMs,
        p.attemptsPerSecond,
        ms(p.latency.p50),
        ms(p.latency.p90),
        ms(p.latency.p99),
        ms(p.latency.max),
        server(c),
        round(machineCpu(c), 0),
      ]);
  };
  addRun("project worker", r.project.phases, (c) => c.workerCpuMicros);
  if (r.naive) addRun(`naive Postgres (pool ${r.naive.pool})`, r.naive.phases, (c) => c.extraCpuMicros);
  if (r.noop) addRun("no-op route /api/health", [r.noop.measured], (c) => c.workerCpuMicros);
  out(
    table(
      [
        "target",
        "phase",
        "attempts",
        "ms",
        "attempts/s",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "max ms",
        "server CPU µs",
        "all CPU µs",
      ],
      e2e,
    ),
  );
  out(
    "  server CPU = workerd (project, no-op) or the Node server (naive) per attempt; all CPU = every process under test",
  );
  out("  (workerd, redis-server, Postgres, the local stand-ins, the naive server), not the load generator.");

  out("\nLatency by outcome (project, naive)");
  const rows: Cell[][] = [];
  for (const [name, phases] of [
    ["project", r.project.load.phases],
    ["naive", r.naive?.load.phases ?? []],
  ] as const)
    for (const p of phases)
      for (const [o, s] of Object.entries(p.byOutcome).sort((a, b) => b[1].count - a[1].count))
        rows.push([name, p.phase, o, s.count, ms(s.p50), ms(s.p90), ms(s.p99), ms(s.max)]);
  out(table(["target", "phase", "outcome", "count", "p50 ms", "p90 ms", "p99 ms", "max ms"], rows));

  out("\nPer attempt, by outcome: probes (QStash delivery paused: only the buy path runs)");
  out(
    table(
      ["probe", "expected", "share", "attempts/s", "p99 ms", ...COST_HEAD],
      r.probes.map((p) => [
        p.name,
        p.expect,
        `${Math.round(p.expectedShare * 100)} %`,
        p.phase.attemptsPerSecond,
        ms(p.phase.latency.p99),
        ...costCells(p.per),
      ]),
    ),
  );
  const ladder = workerLadder(r);
  if (ladder.length > 0) {
    out("\nWhere the worker's CPU goes (differences between probes; workerd CPU µs per attempt)");
    out(table(["step", "adds", "total µs", "step µs"], ladder));
    out(
      "  steps under ~50 µs are within run-to-run noise on a shared machine; `npx tsx bench/micro.ts` measures them directly",
    );
  }
  for (const name of [
    "reserve (admitted, stock left)",
    "sold out, keyed (script answers)",
    "sold out, warm isolate",
  ]) {
    const p = r.probes.find((x) => x.name === name);
    if (!p || p.costs.redis.scripts.calls === 0) continue;
    const n = p.per.attempts;
    const inside = Object.entries(p.costs.redis.other)
      .sort((a, b) => b[1].calls - a[1].calls)
      .map(([cmd, v]) => `${cmd.toUpperCase()} ${round(v.calls / n, 2)}`)
      .join(" · ");
    out(
      `  Redis per attempt, ${name}: EVALSHA ${round(p.costs.redis.scripts.calls / n, 3)} (${p.costs.redis.scripts.calls} in ${n}) → ${inside || "nothing else"}`,
    );
  }
  out("\nPer attempt, seed-000 crowd phases (order pipeline running alongside)");
  out(
    table(
      ["phase", "attempts", ...COST_HEAD],
      r.project.phases.map((p) => [p.phase.phase, p.phase.attempts, ...costCells(p.per)]),
    ),
  );
  out(
    "  EVALSHA = commands sent (one round trip each); other cmds = commands run inside scripts or sent by the pipeline;",
  );
  out(
    "  script µs = Redis execution time (commandstats); redis CPU µs = redis-server process CPU incl. network I/O;",
  );
  out(
    "  stand-ins = the local Upstash REST / QStash / Neon HTTP servers (the orchestrator process), not part of the worker.",
  );

  const pl = r.project.pipeline;
  out("\nOrder pipeline (seed-000 sale)");
  out(
    `  sold out after ${r.project.soldOutAtMs ?? "–"} ms (first SOLD_OUT answer) · every order in Postgres after ${r.project.drainedAtMs ?? "–"} ms (${r.project.drainedAtMs && r.project.soldOutAtMs ? r.project.drainedAtMs - r.project.soldOutAtMs : "–"} ms after sell-out)`,
  );
  out(
    `  ${pl.orders} orders, ${pl.units} units · per order: QStash messages published ${pl.qstashPublishedPerOrder ?? "–"}, deliveries ${pl.qstashDeliveriesPerOrder ?? "–"} · Postgres statements ${pl.pgStatementsPerOrder ?? "–"} (${m.postgres.statements}), transactions ${pl.pgTransactionsPerOrder ?? "–"} (pg_stat_database)`,
  );
  for (const s of pl.costs.pg?.topStatements.slice(0, 5) ?? [])
    out(`    ${String(s.calls).padStart(6)} × ${s.query.slice(0, 110)}`);

  const pa = r.pipelineAlone;
  if (pa && pa.orders > 0) {
    const o = (v: number | null | undefined, d = 1) =>
      v === null || v === undefined ? "–" : round(v / pa.orders, d);
    out(
      `  pipeline alone (probe orders delivered with nothing else running): ${pa.orders} orders in ${pa.drainedMs ?? "–"} ms · per order: worker CPU ${o(pa.costs.cpu.workerd, 0)} µs, stand-ins CPU ${o(pa.costs.cpu.standIns, 0)} µs, Postgres CPU ${o(pa.costs.cpu.postgres, 0)} µs, Redis ${o(pa.costs.redis.scripts.calls + pa.costs.redis.otherCalls, 2)} commands, Postgres statements ${o(pa.costs.pg?.statements, 2)}, transactions ${o(pa.costs.pg?.transactions, 2)}, QStash deliveries ${o(pa.costs.qstash?.attempts, 2)}`,
    );
  }

  out("\nStore level");
  const storeRows: Cell[][] = r.redisDirect.map((d) => [
    `Redis: reservation script direct, ${d.path}`,
    `redis-benchmark EVALSHA -c ${d.clients} -P ${d.pipeline}`,
    d.perSecond,
    d.p99Ms,
    round(d.redis.scripts.usec / Math.max(1, d.redis.scripts.calls), 2),
    round(d.redis.cpuMicros / Math.max(1, d.requests), 1),
    round(d.redis.otherCalls / Math.max(1, d.redis.scripts.calls), 1),
  ]);
  for (const h of r.hotRows)
    storeRows.push([
      "Postgres: hot-row transaction direct",
      `pg, ${h.clients} connections`,
      h.perSecond,
      h.latency.p99,
      null,
      h.postgresCpuMicrosPerTx,
      null,
    ]);
  out(table(["path", "how", "per second", "p99 ms", "exec µs", "server CPU µs", "cmds inside"], storeRows));

  out("\nCapacity (what one deployment's store carries)");
  const c = r.capacity;
  out(
    `  one Upstash database (cap ${UPSTASH_COMMANDS_PER_SECOND.toLocaleString("en-US")} commands/s): ${fmt(c.upstashAttemptsPerSecondAdmitted)} admitted attempts/s · ${fmt(c.upstashAttemptsPerSecondRushMix)} attempts/s of the rush mix · ${fmt(c.upstashAttemptsPerSecondAfterMix)} after sell-out`,
  );
  out(
    `  one Redis core: ${fmt(c.redisCoreAttemptsPerSecondByExecTime)} admitted attempts/s by script execution time, ${fmt(c.redisCoreAttemptsPerSecondByCpu)} by redis-server CPU`,
  );
  out(
    `  Postgres hot row: ${fmt(c.postgresHotRowPerSecond)} reservations/s direct, ${fmt(c.naiveRushPerSecond)} attempts/s behind the naive server in the rush`,
  );

  out("\nRatios");
  const q = r.ratios;
  out(
    `  project ÷ naive Postgres, end to end: rush ${q.projectOverNaiveRush ?? "–"}×, after sell-out ${q.projectOverNaiveAfter ?? "–"}×`,
  );
  out(
    `  project ÷ no-op route: whole crowd ${q.projectOverNoopOverall ?? "–"}×, after sell-out ${q.projectOverNoopAfter ?? "–"}×`,
  );
  out(
    `  store capacity, Redis path ÷ Postgres hot row: ${q.storeRedisScriptOverPostgresHotRow ?? "–"}× (script direct), ${q.storeRedisCoreCpuOverPostgresHotRow ?? "–"}× (one Redis core by CPU)`,
  );

  out("\nGoals (issue 5)");
  out(
    table(
      ["goal", "measured", "met"],
      r.goals.map((g) => [g.goal, g.measured, g.met ? "yes" : "NO"]),
    ),
  );

  out("\nInvariant");
  for (const k of r.checks) out(`  ${k.ok ? "✓" : "✗"} ${k.name}: ${k.detail.slice(0, 160)}`);
  out(r.checks.every((k) => k.ok) ? "  INVARIANT HOLDS" : "  INVARIANT BROKEN: see above");
}

/** CPU of every process under test, per attempt. */
function machineCpu(c: PerAttempt): number {
  return (
    (c.workerCpuMicros ?? 0) +
    (c.standInsCpuMicros ?? 0) +
    c.redisCpuMicros +
    (c.postgresCpuMicros ?? 0) +
    (c.extraCpuMicros ?? 0)
  );
}

/** Worker CPU per attempt along the buy path, each probe adding one step to the one before it. */
function workerLadder(r: BenchResult): Cell[][] {
  const cpu = (name: string) => r.probes.find((p) => p.name === name)?.per.workerCpuMicros ?? null;
  const steps: [string, string, string][] = [
    ["no-op route GET /api/health", "HTTP, Hono, secure headers (Miniflare's entry worker included)", ""],
    ["no shopper token", "POST body read + parse, 401 error rendering", "no-op route GET /api/health"],
    ["malformed product token", "JWT verify (hono/jwt, HS256)", "no shopper token"],
    ["unknown product (Bloom miss)", "Bloom filter check of the token", "malformed product token"],
    [
      "sold out, warm isolate",
      "token → sale lookup (cached) + sold-out cache",
      "unknown product (Bloom miss)",
    ],
    [
      "sold out, keyed (script answers)",
      "one reservation script over Upstash REST",
      "sold out, warm isolate",
    ],
    [
      "replay of a keyed attempt",
      "QStash publish of the order's two jobs (waitUntil)",
      "sold out, keyed (script answers)",
    ],
    ["reserve (admitted, stock left)", "the admitted attempt, end to end", ""],
  ];
  return steps
    .filter(([name]) => cpu(name) !== null)
    .map(([name, adds, before]) => {
      const total = cpu(name) as number;
      const prev = before ? cpu(before) : null;
      return [name, adds, round(total, 0), prev === null ? null : round(total - prev, 0)];
    });
}

const fmt = (v: number | null | undefined) =>
  v === null || v === undefined ? "–" : v.toLocaleString("en-US");
