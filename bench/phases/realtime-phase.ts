/**
 * The realtime phase: N SSE watchers on one sale (`GET /api/sales/:id/events`) while buys take its 1,000
 * units at a steady rate. Per watcher count: push latency from each 202 to each watcher's first event
 * showing that remaining (p50/p99 over watchers × changes), Redis commands per second (INFO commandstats
 * delta, idle with the watchers connected and during the buys), the engine's memory per watcher (RSS of
 * its process before and after connecting), and what polling pages (GET /api/sales/:id every 2 s) would
 * cost the stores for the same shoppers. The engine is named by its base URL and pid only, so another
 * runtime's server can be measured the same way. Run by `bench/run.ts` and alone by `bench/realtime.ts`.
 */
import { readFileSync } from "node:fs";
import { operator } from "../clients/admin";
import type { LatencySummary } from "../clients/protocol";
import { RealtimeClients } from "../clients/realtime-client";
import { cpuMicros } from "../measure/proc";
import type { RealtimeResult, RealtimeRow, RealtimeTarget } from "../measure/realtime-measures";
import { RedisStats } from "../measure/redis-stats";

export type { RealtimeResult, RealtimeTarget };

const POLL_EVERY_MS = 2_000;
/** Watchers of a closed stream keep a lease this long (src/responses/event-streams.ts: 6 s). */
const SETTLE_MS = 7_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (v: number, digits = 1) => Math.round(v * 10 ** digits) / 10 ** digits;

function rssMb(pid: number | null): number | null {
  if (!pid) return null;
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb ? round(Number(kb) / 1024) : null;
  } catch {
    return null;
  }
}

export type RealtimeOptions = {
  watchers: number[];
  rate: number;
  quantity: number;
  pollUpTo: number;
  log: (s: string) => void;
};

/** What one watcher count's measurements share: the engine, its operator, Redis, the client process. */
type Phase = {
  t: RealtimeTarget;
  o: RealtimeOptions;
  op: ReturnType<typeof operator>;
  redis: RedisStats;
  clients: RealtimeClients;
  tag: string;
};

export async function realtimePhase(t: RealtimeTarget, o: RealtimeOptions): Promise<RealtimeResult> {
  const redis = new RedisStats(t.redisUrl);
  const clients = await RealtimeClients.start();
  const phase: Phase = {
    t,
    o,
    op: operator(t.baseUrl, t.adminToken),
    redis,
    clients,
    tag: Date.now().toString(36),
  };
  try {
    const rows: RealtimeRow[] = [];
    for (const n of o.watchers) {
      rows.push(await watcherRow(phase, n));
      await sleep(SETTLE_MS);
    }
    const commandsPerGet = estimatePolling(rows);
    return { rate: o.rate, quantity: o.quantity, commandsPerGet, rows };
  } finally {
    clients.stop();
    await redis.close();
  }
}

/** Every command redis-server ran while `during` ran, and how long that took. */
async function commands<T>(redis: RedisStats, during: () => Promise<T>) {
  const a = await redis.snapshot();
  const started = performance.now();
  const value = await during();
  const d = RedisStats.delta(a, await redis.snapshot());
  return { value, calls: d.scripts.calls + d.otherCalls, seconds: (performance.now() - started) / 1000 };
}

/** A new sale: its pages polled (n ≤ pollUpTo), n watchers connected, idle, then the buys until sold out. */
async function watcherRow(p: Phase, n: number): Promise<RealtimeRow> {
  const { t, o, clients } = p;
  const sale = await p.op.createSale(`rt-${n}-${p.tag}`, 1_000, 2);
  const url = `${t.baseUrl}/api/sales/${sale.saleId}`;
  const measured = n <= o.pollUpTo ? await pollingRun(p, url, n) : null;
  const rssBeforeMb = rssMb(t.pid);
  const w = await clients.ask<{ open: number; statuses: Record<string, number>; connectMs: number }>({
    type: "watch",
    url: `${url}/events`,
    count: n,
  });
  o.log(`  ${n} watchers: ${w.open} open in ${w.connectMs} ms ${JSON.stringify(w.statuses)}`);
  const rssAfterMb = rssMb(t.pid);
  const idle = await commands(p.redis, () => sleep(3_000));
  const rush = await buyUntilSoldOut(p, sale.productToken, n);
  await sleep(1_500);
  const l = await clients.ask<{ latency: LatencySummary; missed: number }>({ type: "latency" });
  await clients.ask({ type: "close" });
  const grew =
    rssBeforeMb !== null && rssAfterMb !== null && w.open > 0
      ? ((rssAfterMb - rssBeforeMb) * 1024) / w.open
      : null;
  o.log(`    push p50 ${l.latency.p50} ms, p99 ${l.latency.p99} ms, ${l.missed} missed`);
  return {
    runtime: t.runtime,
    watchers: n,
    open: w.open,
    statuses: w.statuses,
    connectMs: w.connectMs,
    rssBeforeMb,
    rssAfterMb,
    kbPerWatcher: grew === null ? null : round(grew),
    latency: l.latency,
    missed: l.missed,
    buys: rush.statuses,
    buySeconds: round(rush.durationMs / 1000),
    idleCommandsPerSecond: round(idle.calls / idle.seconds),
    rushCommandsPerSecond: rush.commandsPerSecond,
    polling: {
      requestsPerSecond: round((n * 1000) / POLL_EVERY_MS),
      estimatedCommandsPerSecond: 0,
      measured,
      commandsPerGet: 0,
    },
    engineCpuPercent: rush.engineCpuPercent,
    clientCpuPercent: rush.clientCpuPercent,
  };
}

/** The same shoppers' pages polling the sale every 2 s for 6 s: requests and Redis commands per second. */
async function pollingRun(p: Phase, url: string, n: number): Promise<RealtimeRow["polling"]["measured"]> {
  const m = await commands(p.redis, () =>
    p.clients.ask<{ requests: number }>({
      type: "poll",
      url,
      shoppers: n,
      everyMs: POLL_EVERY_MS,
      durationMs: 6_000,
    }),
  );
  return {
    requestsPerSecond: round(m.value.requests / m.seconds),
    commandsPerSecond: round(m.calls / m.seconds),
  };
}

/** Buys at the phase's rate until the stock is gone: their answers, Redis commands/s, CPU of both sides. */
async function buyUntilSoldOut(p: Phase, productToken: string, n: number) {
  const { t, o, clients } = p;
  const plan = {
    baseUrl: t.baseUrl,
    productToken,
    stock: 1_000,
    quantity: o.quantity,
    rate: o.rate,
    jwtSecret: t.jwtSecret,
    tag: `rt-${p.tag}-${n}`,
  };
  const cpuBefore = t.pid ? cpuMicros(t.pid) : null;
  const clientBefore = cpuMicros(clients.pid);
  const rush = await commands(p.redis, () =>
    clients.ask<{ statuses: Record<string, number>; durationMs: number }>({ type: "buy", plan }),
  );
  const cpuAfter = t.pid ? cpuMicros(t.pid) : null;
  const clientAfter = cpuMicros(clients.pid);
  return {
    ...rush.value,
    commandsPerSecond: round(rush.calls / rush.seconds),
    engineCpuPercent:
      cpuBefore !== null && cpuAfter !== null ? round((cpuAfter - cpuBefore) / 1e4 / rush.seconds) : null,
    clientCpuPercent: round((clientAfter - clientBefore) / 1e4 / rush.seconds),
  };
}

/**
 * Where polling was not run (more pages than this machine serves), per GET × requests/s, the cost per GET
 * taken from the largest polling run (a page's GET reads every sale, cached 500 ms per isolate).
 */
function estimatePolling(rows: RealtimeRow[]): number {
  const largest = rows.filter((r) => r.polling.measured).at(-1)?.polling;
  const commandsPerGet = largest?.measured
    ? round(largest.measured.commandsPerSecond / Math.max(1, largest.measured.requestsPerSecond), 2)
    : 0;
  for (const r of rows) {
    r.polling.commandsPerGet = commandsPerGet;
    r.polling.estimatedCommandsPerSecond = round(r.polling.requestsPerSecond * commandsPerGet);
  }
  return commandsPerGet;
}
