/** The room phases' tables (bench/room.ts): the waiters by count, then the crowd and its checks. */
import type { CrowdResult } from "../phases/room-crowd";
import type { WaitersRow } from "../phases/room-waiters";
import { table } from "./table";

/** What the room phases measured (bench/room.ts): the waiters by count, then the crowd. */
export type RoomResult = {
  runtime: string;
  loadAverage: { atStart: number[]; afterWaiters?: number[]; atEnd: number[] };
  waiters: WaitersRow[];
  crowd: CrowdResult | null;
};

export function printRoom(r: RoomResult, out: (s: string) => void = console.log): void {
  const load = (l?: number[]) => (l ? l.map((v) => v.toFixed(2)).join(" ") : "–");
  if (r.waiters.length > 0) {
    out(
      `\nRoom waiters on ${r.runtime} (load average at start ${load(r.loadAverage.atStart)}, after ${load(r.loadAverage.afterWaiters)}):`,
    );
    out(
      table(
        [
          "waiters",
          "joins/s",
          "join: cmds · script µs · engine µs",
          "reads/s",
          "read: cmds · engine µs",
          "open",
          "connect ms",
          "KiB/waiter",
          "Redis cmd/s idle",
          "cmd/s moving",
          "push p50 ms",
          "p99 ms",
          "missed",
          "went back",
          "engine CPU %",
          "client CPU %",
        ],
        r.waiters.map((w) => [
          w.waiters,
          w.joins.perSecond,
          `${w.joins.redisPerRequest} · ${w.joins.scriptMicros} · ${w.joins.engineMicros}`,
          w.reads.perSecond,
          `${w.reads.redisPerRequest} · ${w.reads.engineMicros}`,
          w.open,
          w.connectMs,
          w.kbPerWaiter,
          w.idleCommandsPerSecond,
          w.changeCommandsPerSecond,
          w.latency.p50,
          w.latency.p99,
          w.missed,
          w.frontierBack,
          w.engineCpuPercent,
          w.clientCpuPercent,
        ]),
      ),
    );
    out(
      "  joins and reads: distinct shoppers, a closed loop of 32 connections; cmds = Redis commands per request",
    );
    out(
      "  (INFO commandstats, a script's inner commands included), engine µs = the engine process's CPU per request;",
    );
    out(
      "  push = from an operator's added unit (the next step admits the next waiter) to each waiter's first event",
    );
    out(
      "  with that frontier (waiters × changes); cmd/s idle = every Redis command with the waiters connected, 3 s.",
    );
  }
  const c = r.crowd;
  if (!c) return;
  const f = c.figures;
  const b = f.admittedBuys;
  out(
    `\nRoom crowd on ${r.runtime}: ${c.users.toLocaleString("en-US")} shoppers for ${c.stock} units (load average at end ${load(r.loadAverage.atEnd)})`,
  );
  out(
    table(
      ["figure", "value"],
      [
        ["run · joins (s)", `${c.seconds} · ${c.joinSeconds}`],
        ["joined · joins/s", `${c.summary.joined} · ${c.joinsPerSecond}`],
        [
          "join answers · ms to a ticket p50/p99 (max over parts)",
          `${JSON.stringify(c.summary.joinAnswers)} · ${c.summary.joinMs.p50}/${c.summary.joinMs.p99}`,
        ],
        ["watching a stream (rest polled)", c.summary.streams],
        ["told (shoppers)", JSON.stringify(c.summary.told)],
        ["ended", JSON.stringify(c.summary.ends)],
        [
          "admissions · units offered · offered again",
          `${f.admissions} · ${f.unitsOffered} · ${f.unitsOfferedAgain}`,
        ],
        [
          "admitted buys within the admission that got their units (unanswered)",
          `${b.got}/${b.within} (${b.within ? ((100 * b.got) / b.within).toFixed(1) : "–"} %) (${b.unanswered})`,
        ],
        ["… their answers", JSON.stringify(b.answers)],
        ["pay and cancel answers", JSON.stringify(c.summary.actions)],
        ["… of them told will_get before", `${b.afterWillGetGot}/${b.afterWillGet}`],
        ["orders", JSON.stringify(f.orders)],
        ["units paid · left · stock", `${f.unitsPaid} · ${f.remaining} · ${f.stock}`],
        ["frontier · cutoff · tickets", `${f.frontier} · ${f.cutoff ?? "–"} · ${f.tickets}`],
        ["engine CPU % · µs per shopper", `${c.engineCpuPercent} · ${c.engineMicrosPerShopper}`],
        ["client CPU % (two processes)", c.clientCpuPercent],
        ["Redis commands per shopper", c.redisCommandsPerShopper],
        ["hold samples (none above remaining)", c.holdSamples],
        ["violations", c.violations.length],
      ],
    ),
  );
  for (const v of c.violations.slice(0, 20)) out(`  VIOLATION ${v.rule}: ${v.detail}`);
}
