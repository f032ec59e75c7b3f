/**
 * The room's waiters (issue 19): for each count N, a new queue sale whose first 20 shoppers are
 * admitted at once (20 units, limit 1), then N more shoppers join (joins/s, Redis commands and engine
 * CPU per join), read their tickets (the same per read), one shopper per change joins behind them
 * (so the line never runs out), and each of the N opens its ticket stream
 * (`GET …/queue/events`, its own token and address). With them connected: Redis commands per second
 * idle, then the frontier moved one place at a time (the operator adds a unit at `rate` per second, the
 * room's next step admits the next waiter) and the push latency from each change's answer to each
 * waiter's first event showing that frontier. The sale lasts a day, so the cutoff (20 units × the
 * passes left) covers every waiter.
 */
import { readFileSync } from "node:fs";
import { operator } from "../clients/admin";
import type { LatencySummary } from "../clients/protocol";
import { RoomClients } from "../clients/room-client";
import type { Shoppers } from "../clients/room-load";
import { cpuMicros } from "../measure/proc";
import { RedisStats } from "../measure/redis-stats";

export type JoinRow = {
  requests: number;
  perSecond: number;
  statuses: Record<string, number>;
  redisPerRequest: number;
  scriptMicros: number;
  engineMicros: number;
};
export type WaitersRow = {
  waiters: number;
  joins: JoinRow;
  reads: JoinRow;
  open: number;
  statuses: Record<string, number>;
  connectMs: number;
  kbPerWaiter: number | null;
  idleCommandsPerSecond: number;
  changes: number;
  changeCommandsPerSecond: number;
  latency: LatencySummary;
  missed: number;
  frontierBack: number;
  engineCpuPercent: number;
  clientCpuPercent: number;
};

const HOLDERS = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (v: number, digits = 1) => Math.round(v * 10 ** digits) / 10 ** digits;
const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;

type Target = { baseUrl: string; pid: number; redisUrl: string; adminToken: string; jwtSecret: string };
type Options = {
  waiters: number[];
  rate: number;
  changes: number;
  connections: number;
  log: (s: string) => void;
};

export async function roomWaitersPhase(t: Target, o: Options): Promise<WaitersRow[]> {
  const redis = new RedisStats(t.redisUrl);
  const clients = await RoomClients.start();
  const tag = Date.now().toString(36);
  try {
    const rows: WaitersRow[] = [];
    for (const n of o.waiters) {
      rows.push(await waitersRow({ t, o, redis, clients }, n, `${tag}${n}w`));
      await sleep(7_000);
    }
    return rows;
  } finally {
    clients.stop();
    await redis.close();
  }
}

type Run = { t: Target; o: Options; redis: RedisStats; clients: RoomClients };

/** A closed loop of joins or reads from the client process: rate, Redis and engine CPU per request. */
async function requests(r: Run, shoppers: Shoppers, method: "POST" | "GET"): Promise<JoinRow> {
  const [r0, c0, started] = [await r.redis.snapshot(), cpuMicros(r.t.pid, true), performance.now()];
  const answer = await r.clients.ask<{ statuses: Record<string, number> }>({
    type: "requests",
    method,
    connections: r.o.connections,
    ...shoppers,
  });
  const seconds = (performance.now() - started) / 1000;
  const d = RedisStats.delta(r0, await r.redis.snapshot());
  const n = shoppers.count;
  return {
    requests: n,
    perSecond: Math.round(n / seconds),
    statuses: answer.statuses,
    redisPerRequest: round((d.scripts.calls + d.otherCalls) / n, 2),
    scriptMicros: Math.round(d.scripts.usec / n),
    engineMicros: Math.round((cpuMicros(r.t.pid, true) - c0) / n),
  };
}

async function waitersRow(r: Run, n: number, prefix: string): Promise<WaitersRow> {
  const { t, o, clients } = r;
  const op = operator(t.baseUrl, t.adminToken);
  const sale = await createQueueSale(t, `room-${prefix}`, HOLDERS);
  const base = { baseUrl: t.baseUrl, saleId: sale.saleId, jwtSecret: t.jwtSecret, prefix };
  await clients.ask({ type: "requests", method: "POST", connections: 4, ...base, from: 0, count: HOLDERS });
  const waiters = { ...base, from: HOLDERS, count: n };
  const joins = await requests(r, waiters, "POST");
  const reads = await requests(r, waiters, "GET");
  // shoppers behind the waiters (not watching), so that every change moves the frontier however few wait
  await clients.ask({
    type: "requests",
    method: "POST",
    connections: 4,
    ...base,
    from: HOLDERS + n,
    count: o.changes,
  });
  o.log(
    `  ${n} waiters: joins ${joins.perSecond}/s (${joins.engineMicros} µs engine CPU each), reads ${reads.perSecond}/s`,
  );
  const rssBefore = rssMb(t.pid);
  const w = await clients.ask<{ open: number; statuses: Record<string, number>; connectMs: number }>({
    type: "watch",
    ...waiters,
  });
  const rssAfter = rssMb(t.pid);
  o.log(`  ${n} waiters: ${w.open} streams open in ${w.connectMs} ms ${JSON.stringify(w.statuses)}`);
  const i0 = await r.redis.snapshot();
  await sleep(3_000);
  const idle = RedisStats.delta(i0, await r.redis.snapshot());
  const [m0, e0, k0, started] = [
    await r.redis.snapshot(),
    cpuMicros(t.pid),
    cpuMicros(clients.pid),
    performance.now(),
  ];
  const changes: { at: number; frontier: number }[] = [];
  for (let i = 1; i <= o.changes; i++) {
    const wait = started + ((i - 1) * 1000) / o.rate - performance.now();
    if (wait > 0) await sleep(wait);
    await op.adjust(sale.saleId, 1);
    changes.push({ at: performance.timeOrigin + performance.now(), frontier: HOLDERS + i });
  }
  await sleep(1_500);
  const seconds = (performance.now() - started) / 1000;
  const during = RedisStats.delta(m0, await r.redis.snapshot());
  const engineCpuPercent = round((cpuMicros(t.pid) - e0) / 1e4 / seconds);
  const clientCpuPercent = round((cpuMicros(clients.pid) - k0) / 1e4 / seconds);
  const l = await clients.ask<{ latency: LatencySummary; missed: number; back: number }>({
    type: "latency",
    changes,
  });
  await clients.ask({ type: "close" });
  o.log(
    `    frontier pushed p50 ${l.latency.p50} ms, p99 ${l.latency.p99} ms, ${l.missed} missed, ${l.back} went back`,
  );
  return {
    waiters: n,
    joins,
    reads,
    open: w.open,
    statuses: w.statuses,
    connectMs: w.connectMs,
    kbPerWaiter: w.open > 0 ? round(((rssAfter - rssBefore) * 1024) / w.open) : null,
    idleCommandsPerSecond: round((idle.scripts.calls + idle.otherCalls) / 3),
    changes: o.changes,
    changeCommandsPerSecond: round((during.scripts.calls + during.otherCalls) / seconds),
    latency: l.latency,
    missed: l.missed,
    frontierBack: l.back,
    engineCpuPercent,
    clientCpuPercent,
  };
}

/** A queue sale live for a day: `stock` units, one per shopper. */
async function createQueueSale(t: Target, productId: string, stock: number) {
  const now = Date.now();
  const res = await fetch(`${t.baseUrl}/api/admin/sales`, {
    method: "POST",
    headers: { authorization: `Bearer ${t.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({
      productId,
      name: `Room ${productId}`,
      priceCents: 4_900,
      stock,
      perUserLimit: 1,
      startsAt: new Date(now - 1_000).toISOString(),
      endsAt: new Date(now + 24 * 3_600_000).toISOString(),
      paymentWindowSeconds: 3_600,
      admission: "queue",
    }),
  });
  if (res.status !== 201) throw new Error(`create queue sale: ${res.status} ${await res.text()}`);
  return (await res.json()) as { saleId: string; productToken: string };
}
