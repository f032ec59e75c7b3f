/** The realtime phase's table (see realtime-phase.ts): one row per runtime and watcher count. */

import type { RealtimeResult } from "../measure/realtime-measures";
import { type Cell, table } from "./table";

export function printRealtime(r: RealtimeResult, out: (s: string) => void = console.log): void {
  out(
    `\nRealtime: SSE watchers of one sale while ${r.quantity}-unit buys take its 1,000 units at ${r.rate}/s, one at a time`,
  );
  const rows: Cell[][] = r.rows.map((x) => [
    x.runtime,
    x.watchers,
    x.open,
    Math.round((Object.values(x.buys).reduce((a, b) => a + b, 0) / Math.max(0.1, x.buySeconds)) * 10) / 10,
    x.latency.p50,
    x.latency.p99,
    x.latency.max,
    x.missed,
    x.idleCommandsPerSecond,
    x.rushCommandsPerSecond,
    x.engineCpuPercent,
    x.clientCpuPercent,
    x.kbPerWatcher,
    x.polling.requestsPerSecond,
    x.polling.measured?.commandsPerSecond ??
      (x.polling.commandsPerGet > 0 ? x.polling.estimatedCommandsPerSecond : "–"),
  ]);
  out(
    table(
      [
        "runtime",
        "watchers",
        "open",
        "buys/s",
        "push p50 ms",
        "p99 ms",
        "max ms",
        "missed",
        "Redis cmd/s idle",
        "cmd/s buying",
        "engine CPU %",
        "client CPU %",
        "KiB/watcher",
        "polling req/s",
        "polling cmd/s",
      ],
      rows,
    ),
  );
  out(`  buys/s = what the engine answered of the ${r.rate}/s asked, while it streamed to the watchers;`);
  out("  push = from a buy's 202 to each watcher's first event with that remaining (watchers × changes);");
  out("  Redis cmd/s = every command redis-server ran (INFO commandstats), idle with the watchers connected");
  out(
    "  and while buying (the buys' own scripts included); engine CPU % = the engine process's utime + stime",
  );
  out("  while buying, in % of one core (client: the watchers' and buyers' process, on the same cores);");
  out("  KiB/watcher = the engine's RSS growth ÷ open;");
  out(
    `  polling = the same shoppers' pages polling GET /api/sales/:id every 2 s: measured by running the pollers`,
  );
  const perGet = [...new Map(r.rows.map((x) => [x.runtime, x.polling.commandsPerGet])).entries()];
  out(
    `  where the row has ≤ 1,000 watchers, else commands per GET of the runtime's largest polling run (${perGet.map(([rt, n]) => `${rt} ${n}`).join(", ")}) × req/s.`,
  );
}
