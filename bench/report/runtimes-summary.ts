/**
 * The across-runtimes summary of `npm run bench`: per runtime and phase of the seed-000 crowd, the engine
 * next to the naive Postgres server on the same runtime (workers: the workerd rows and the Node naive
 * server of the main run), and the goals of issue 10 checked on the fastest server runtime.
 */
import type { BenchResult, Goal, Measured } from "../measure/measures";
import type { RuntimeMeasured, RuntimeRow } from "../measure/runtime-measures";
import { round } from "./table";

export type RuntimeLine = {
  runtime: string;
  phase: string;
  attempts: number;
  perSecond: number;
  p50: number;
  p90: number;
  p99: number;
  /** EVALSHA (round trips for scripts) and other commands (inside scripts, or sent alone) per attempt. */
  evalsha: number;
  otherCommands: number;
  /** The engine's process (workerd, deno, bun) CPU µs per attempt. */
  engineCpuMicros: number | null;
  naive: {
    server: string;
    perSecond: number;
    p50: number;
    p90: number;
    p99: number;
    cpuMicros: number | null;
  } | null;
  ratio: number | null;
};

export type RuntimesSummary = {
  lines: RuntimeLine[];
  /** Per server runtime: the admitted, Bloom-miss and sold-out probes. */
  probes: {
    runtime: string;
    name: string;
    perSecond: number;
    p99: number;
    evalsha: number;
    otherCommands: number;
    engineCpuMicros: number;
  }[];
  fastest: string | null;
  goals: Goal[];
};

function line(
  runtime: string,
  m: Measured,
  cpu: number | null,
  naive: Measured | undefined,
  naiveCpu: number | null,
  server: string,
): RuntimeLine {
  const p = m.phase;
  const n = naive?.phase;
  return {
    runtime,
    phase: p.phase,
    attempts: p.attempts,
    perSecond: p.attemptsPerSecond,
    p50: p.latency.p50,
    p90: p.latency.p90,
    p99: p.latency.p99,
    evalsha: m.per.scripts,
    otherCommands: m.per.otherCommands,
    engineCpuMicros: cpu,
    naive: n
      ? {
          server,
          perSecond: n.attemptsPerSecond,
          p50: n.latency.p50,
          p90: n.latency.p90,
          p99: n.latency.p99,
          cpuMicros: naiveCpu,
        }
      : null,
    ratio: n && n.attemptsPerSecond > 0 ? round(p.attemptsPerSecond / n.attemptsPerSecond, 2) : null,
  };
}

export function summarizeRuntimes(result: BenchResult | null, rows: RuntimeRow[]): RuntimesSummary {
  const lines: RuntimeLine[] = [];
  if (result)
    for (const m of result.project.phases) {
      const n = result.naive?.phases.find((x) => x.phase.phase === m.phase.phase);
      lines.push(
        line("workers", m, m.per.workerCpuMicros, n, n?.per.extraCpuMicros ?? null, "node:http (Node)"),
      );
    }
  for (const row of rows)
    for (const m of row.engine.phases) {
      const n = row.naive?.phases.find((x) => x.phase.phase === m.phase.phase) as RuntimeMeasured | undefined;
      const server =
        row.naive?.http === "node"
          ? `node:http (${row.runtime})`
          : row.runtime === "bun"
            ? "Bun.serve"
            : "Deno.serve";
      lines.push(line(row.runtime, m, m.serverCpuMicros, n, n?.serverCpuMicros ?? null, server));
    }
  const probes = rows.flatMap((row) =>
    row.probes.map((p) => ({
      runtime: row.runtime,
      name: p.name,
      perSecond: p.phase.attemptsPerSecond,
      p99: p.phase.latency.p99,
      evalsha: p.per.scripts,
      otherCommands: p.per.otherCommands,
      engineCpuMicros: p.serverCpuMicros,
    })),
  );
  // The fastest server runtime: the most attempts per second over the whole crowd.
  const overall = (row: RuntimeRow) => {
    const ms = row.engine.load.phases.reduce((s, p) => s + p.durationMs, 0);
    return ms > 0 ? row.engine.load.attempts / ms : 0;
  };
  const best = [...rows].sort((a, b) => overall(b) - overall(a))[0];
  const fastest = best?.runtime ?? null;
  const goals = best ? runtimeGoals(fastest, lines, probes) : [];
  return { lines, probes, fastest, goals };
}

/** The goals of issue 10, on the fastest server runtime's lines and probes. */
function runtimeGoals(
  fastest: string | null,
  lines: RuntimeLine[],
  probes: RuntimesSummary["probes"],
): Goal[] {
  const at = (phase: string) => lines.find((l) => l.runtime === fastest && l.phase === phase);
  const probe = (name: string) => probes.find((p) => p.runtime === fastest && p.name.startsWith(name));
  const rush = at("rush");
  const after = at("after");
  const admitted = probe("reserve");
  const bloom = probe("unknown product");
  const goal = (g: string, measured: string, met: boolean): Goal => ({
    goal: `${fastest}: ${g}`,
    measured,
    met,
  });
  return [
    goal(">= 2x the naive server during the rush", `${rush?.ratio ?? "?"}x`, (rush?.ratio ?? 0) >= 2),
    goal(">= 5x the naive server after sell-out", `${after?.ratio ?? "?"}x`, (after?.ratio ?? 0) >= 5),
    goal(
      "p99 under 100 ms",
      `rush ${rush?.p99 ?? "?"} ms, after ${after?.p99 ?? "?"} ms`,
      (rush?.p99 ?? 1e9) < 100 && (after?.p99 ?? 1e9) < 100,
    ),
    goal(
      "<= 200 µs engine CPU per admitted attempt",
      `${admitted?.engineCpuMicros ?? "?"} µs`,
      (admitted?.engineCpuMicros ?? 1e9) <= 200,
    ),
    goal(
      "one Redis round trip per admitted attempt",
      `${admitted?.evalsha ?? "?"} EVALSHA`,
      Math.abs((admitted?.evalsha ?? 9) - 1) <= 0.01,
    ),
    goal(
      "no Redis command per Bloom miss",
      `${bloom ? round(bloom.evalsha + bloom.otherCommands, 3) : "?"} per attempt`,
      bloom ? bloom.evalsha + bloom.otherCommands < 0.01 : false,
    ),
  ];
}
