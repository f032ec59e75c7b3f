/** The wrk rows' table (bench/phases/floor-paths.ts): per runtime and path, against the no-op route. */
import type { FloorRow } from "../phases/floor-paths";
import { table } from "./table";

/** One runtime's engine rows and its naive server's, as `npm run bench` prints them. */
export type FloorRuntime = { runtime: string; rows: FloorRow[]; naive: FloorRow[] };

const ms = (us: number) => `${(us / 1000).toFixed(1)} ms`;

/** The table of every runtime's paths: req/s, p99, CPU per request, each as a ratio to the no-op route. */
export function printFloor(runtimes: FloorRuntime[], log: (line: string) => void): void {
  const rows = runtimes.flatMap(({ runtime, rows, naive }) => {
    const noop = rows[0];
    return [...rows, ...naive].map((r) => {
      const stores =
        r.cpuPerRequest.redis === undefined
          ? "–"
          : `redis ${r.cpuPerRequest.redis} · pg ${r.cpuPerRequest.postgres} · qstash+bench ${r.cpuPerRequest.qstash}${r.messagesPerRequest === undefined ? "" : ` · ${r.messagesPerRequest} msg`}`;
      const shareWrong = r.expect < 300 ? r.wrk.non2xx : r.wrk.requests - r.wrk.non2xx;
      const reqRatio = noop ? (r.wrk.reqPerSec / noop.wrk.reqPerSec).toFixed(2) : "–";
      const cpuRatio = noop ? (r.cpuPerRequest.server / noop.cpuPerRequest.server).toFixed(2) : "–";
      return [
        runtime,
        r.path,
        r.wrk.reqPerSec,
        `${reqRatio}×`,
        ms(r.wrk.p99Us),
        r.cpuPerRequest.server,
        `${cpuRatio}×`,
        stores,
        r.cpuPerRequest.total,
        shareWrong + r.wrk.socketErrors,
      ];
    });
  });
  log(
    table(
      [
        "runtime",
        "path (wrk, 1 thread)",
        "req/s",
        "vs no-op",
        "p99",
        "server µs/req",
        "vs no-op",
        "stores µs/req",
        "total µs/req",
        "unexpected",
      ],
      rows,
      2,
    ),
  );
  for (const line of versusNaive(runtimes)) log(line);
}

/** The engine's answer against the naive server's on the same runtime, in stock and sold out (req/s). */
function versusNaive(runtimes: FloorRuntime[]): string[] {
  const lines: string[] = [];
  for (const { runtime, rows, naive } of runtimes) {
    const pairs: [string, number, number][] = [];
    const find = (list: FloorRow[], expect: number) => list.find((r) => r.expect === expect);
    for (const expect of [202, 410]) {
      const mine = find(rows, expect);
      const theirs = find(naive, expect);
      if (mine && theirs)
        pairs.push([expect === 202 ? "in stock" : "sold out", mine.wrk.reqPerSec, theirs.wrk.reqPerSec]);
    }
    if (pairs.length === 0) continue;
    const parts = pairs.map(
      ([what, a, b]) => `${what} ${(a / Math.max(1, b)).toFixed(2)}× (${a} vs ${b} req/s)`,
    );
    lines.push(`  ${runtime}: engine vs naive server, same runtime: ${parts.join("; ")}`);
  }
  return lines;
}
