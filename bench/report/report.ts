/** The terminal report of `npm run bench`: one section per part of the run (bench/README.md). */
import type { BenchResult, Measured, PerAttempt } from "../measure/measures";
import { printStore } from "./store-report";
import { type Cell, round, table } from "./table";
import { workerLadder } from "./worker-ladder";

type Out = (s?: string) => void;
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
  const out: Out = (s = "") => console.log(s);
  printHeader(r, out);
  printEndToEnd(r, out);
  printOutcomes(r, out);
  printProbes(r, out);
  printCrowdCosts(r, out);
  printStore(r, out);
  out("\nInvariant");
  for (const k of r.checks) out(`  ${k.ok ? "✓" : "✗"} ${k.name}: ${k.detail.slice(0, 160)}`);
  out(r.checks.every((k) => k.ok) ? "  INVARIANT HOLDS" : "  INVARIANT BROKEN: see above");
}

function printHeader(r: BenchResult, out: Out): void {
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
}

const E2E_HEAD = [
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
];

function printEndToEnd(r: BenchResult, out: Out): void {
  out(
    `\nEnd to end: same crowd, same load generator (separate process), same connections, ${r.meta.rate > 0 ? `open loop at ${r.meta.rate}/s (latency from each attempt's slot)` : "closed loop"}`,
  );
  const rows = (name: string, list: Measured[], server: (p: PerAttempt) => number | null): Cell[][] =>
    list.map(({ phase: p, per: c }) => [
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
  const e2e = [
    ...rows("project worker", r.project.phases, (c) => c.workerCpuMicros),
    ...(r.naive
      ? rows(`naive Postgres (pool ${r.naive.pool})`, r.naive.phases, (c) => c.extraCpuMicros)
      : []),
    ...(r.noop ? rows("no-op route /api/health", [r.noop.measured], (c) => c.workerCpuMicros) : []),
  ];
  out(table(E2E_HEAD, e2e));
  out(
    "  server CPU = workerd (project, no-op) or the Node server (naive) per attempt; all CPU = every process under test",
  );
  out("  (workerd, redis-server, Postgres, the local stand-ins, the naive server), not the load generator.");
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

function printOutcomes(r: BenchResult, out: Out): void {
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
}

function printProbes(r: BenchResult, out: Out): void {
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
}

function printCrowdCosts(r: BenchResult, out: Out): void {
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
}
