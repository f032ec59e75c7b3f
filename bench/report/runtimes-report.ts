/**
 * The across-runtimes table of `npm run bench` (the figures: runtimes-summary.ts): per runtime and phase
 * of the seed-000 crowd, the engine next to the naive Postgres server on the same runtime, Redis commands
 * and the engine's CPU per attempt, p50/p90/p99; the server runtimes' probes; the goals of issue 10.
 */
import type { RuntimeLine, RuntimesSummary } from "./runtimes-summary";
import { type Cell, round, table } from "./table";

const LINE_HEAD = [
  "runtime",
  "phase",
  "attempts",
  "engine /s",
  "p50",
  "p90",
  "p99 ms",
  "EVALSHA",
  "other cmds",
  "engine CPU µs",
  "naive server",
  "naive /s",
  "naive p50/p90/p99 ms",
  "naive CPU µs",
  "ratio",
];

function lineCells(l: RuntimeLine): Cell[] {
  return [
    l.runtime,
    l.phase,
    l.attempts,
    l.perSecond,
    round(l.p50),
    round(l.p90),
    round(l.p99),
    l.evalsha,
    l.otherCommands,
    l.engineCpuMicros === null ? null : round(l.engineCpuMicros, 0),
    l.naive?.server,
    l.naive?.perSecond,
    l.naive ? `${round(l.naive.p50)}/${round(l.naive.p90)}/${round(l.naive.p99)}` : null,
    l.naive?.cpuMicros === null || l.naive?.cpuMicros === undefined ? null : round(l.naive.cpuMicros, 0),
    l.ratio === null ? null : `${l.ratio}×`,
  ];
}

export function printRuntimes(s: RuntimesSummary, versions: Record<string, string>): void {
  const out = (t = "") => console.log(t);
  out(
    `\nAcross runtimes: the seed-000 crowd, engine vs the naive Postgres server on the same runtime (${Object.entries(
      versions,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")})`,
  );
  out(table(LINE_HEAD, s.lines.map(lineCells), 2));
  out(
    "  engine CPU = the engine's process (workerd; deno; bun) per attempt, order pipeline included; EVALSHA = script round trips;",
  );
  out(
    "  other cmds = commands run inside scripts or sent alone (pipeline, timeline). ratio = engine /s ÷ naive /s.",
  );
  if (s.probes.length > 0) {
    out("\nServer runtimes, per outcome (probes, QStash delivery paused)");
    out(
      table(
        ["runtime", "probe", "attempts/s", "p99 ms", "EVALSHA", "other cmds", "engine CPU µs"],
        s.probes.map((p) => [
          p.runtime,
          p.name,
          p.perSecond,
          round(p.p99),
          p.evalsha,
          p.otherCommands,
          round(p.engineCpuMicros, 0),
        ]),
        2,
      ),
    );
  }
  if (s.goals.length > 0) {
    out(`\nGoals (issue 10), on the fastest server runtime: ${s.fastest}`);
    out(
      table(
        ["goal", "measured", "met"],
        s.goals.map((g) => [g.goal, g.measured, g.met ? "yes" : "NO"]),
        2,
      ),
    );
  }
}
