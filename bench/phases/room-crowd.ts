/**
 * The room's crowd (issue 19): `users` shoppers for 1,000 units of a queue sale (limit 2), the crowd of
 * bench/clients/room-crowd.ts split over two forked client processes: most join and watch (a stream, or
 * polling `queue/me`), admitted ones buy with the `Admission` header and pay, some cancel, some let the
 * order expire unpaid, some never buy. Short windows (admission 10 s, payment 15 s) make units come back
 * within the run. Judged by chaos/room-rules.ts, the chaos scenario's rules: nothing oversold, nobody
 * told will_not_get gets a unit, every admitted buy within its admission gets its units, places never
 * move, no unit held by two admissions at once (sampled), none left while waiters within the cutoff remain.
 */
import { Redis } from "ioredis";
import pg from "pg";
import { judgeRoom, type RoomFigures, type RoomViolation, sampleHolds } from "../../chaos/room-rules";
import { saleKeys } from "../../src/stock/keys";
import { RoomClients } from "../clients/room-client";
import { type CrowdSummary, mergeSummaries } from "../clients/room-crowd";
import { cpuMicros } from "../measure/proc";
import { RedisStats } from "../measure/redis-stats";

/** The engine's settings for the crowd: short windows, room for the streams, limits out of the way. */
export const CROWD_VARS = { ADMISSION_WINDOW_SECONDS: "10", BUY_RESOLVE_WINDOW_MS: "2000" };

export type CrowdResult = {
  users: number;
  stock: number;
  seconds: number;
  joinSeconds: number;
  joinsPerSecond: number;
  engineCpuPercent: number;
  engineMicrosPerShopper: number;
  clientCpuPercent: number;
  redisCommandsPerShopper: number;
  summary: Omit<CrowdSummary, "willNotGet" | "admitted">;
  figures: RoomFigures;
  holdSamples: number;
  violations: RoomViolation[];
};

type Target = {
  baseUrl: string;
  pid: number;
  redisUrl: string;
  databaseUrl: string;
  adminToken: string;
  jwtSecret: string;
};
type Options = { users: number; stock: number; parts: number; log: (s: string) => void };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function roomCrowdPhase(t: Target, o: Options): Promise<CrowdResult> {
  const redis = new Redis(t.redisUrl, { maxRetriesPerRequest: 1 });
  const db = new pg.Pool({ connectionString: t.databaseUrl, max: 2 });
  const stats = new RedisStats(t.redisUrl);
  const clients = await Promise.all(Array.from({ length: o.parts }, () => RoomClients.start()));
  try {
    const now = Date.now();
    const startsAt = now + 5_000;
    // long enough for the joins at a slow rate and for the returned units' rounds after them
    const endsAt = startsAt + Math.ceil(Math.max(120, o.users / 150) + 150) * 1000;
    const sale = await createSale(t, { stock: o.stock, startsAt, endsAt });
    o.log(
      `  crowd: ${o.users} shoppers for ${o.stock} units, sale ${sale.saleId} until ${new Date(endsAt).toISOString()}`,
    );
    const holds = sampleHolds(redis, sale.saleId, 500);
    const [r0, e0, k0, started] = [
      await stats.snapshot(),
      cpuMicros(t.pid),
      clientCpu(clients),
      performance.now(),
    ];
    const parts = await Promise.all(
      clients.map((c, part) =>
        c.ask<{ summary: CrowdSummary; joinsDoneMs: number }>({
          type: "crowd",
          baseUrl: t.baseUrl,
          saleId: sale.saleId,
          productToken: sale.productToken,
          jwtSecret: t.jwtSecret,
          users: o.users,
          seed: 19,
          part,
          parts: o.parts,
          joinConcurrency: 24,
          maxStreams: 3_000,
          deadline: endsAt + 2_000,
        }),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const [d, engine, client] = [
      RedisStats.delta(r0, await stats.snapshot()),
      cpuMicros(t.pid) - e0,
      clientCpu(clients) - k0,
    ];
    const summary = mergeSummaries(parts.map((p) => p.summary));
    const joinSeconds = Math.max(...parts.map((p) => p.joinsDoneMs)) / 1000;
    o.log(`  crowd done in ${Math.round(seconds)} s (joins ${Math.round(joinSeconds)} s); settling …`);
    await settled(redis, db, sale.saleId);
    await fetch(`${t.baseUrl}/api/admin/sales/${sale.saleId}/queue`, {
      headers: { authorization: `Bearer ${t.adminToken}` },
    });
    await sleep(500);
    const sampled = await holds.stop();
    const judged = await judgeRoom({ redis, db }, sale.saleId, summary, {
      now: Date.now(),
      endsAt,
      holds: sampled,
    });
    const { willNotGet: _w, admitted: _a, ...counts } = summary;
    return {
      users: o.users,
      stock: o.stock,
      seconds: Math.round(seconds),
      joinSeconds: Math.round(joinSeconds),
      joinsPerSecond: Math.round(summary.joined / joinSeconds),
      engineCpuPercent: Math.round(engine / 1e4 / seconds),
      engineMicrosPerShopper: Math.round(engine / o.users),
      clientCpuPercent: Math.round(client / 1e4 / seconds),
      redisCommandsPerShopper: Math.round(((d.scripts.calls + d.otherCalls) / o.users) * 100) / 100,
      summary: counts,
      figures: judged.figures,
      holdSamples: sampled.samples,
      violations: judged.violations,
    };
  } finally {
    for (const c of clients) c.stop();
    await stats.close();
    redis.disconnect();
    await db.end().catch(() => undefined);
  }
}

const clientCpu = (clients: RoomClients[]) => clients.reduce((s, c) => s + cpuMicros(c.pid), 0);

/** Until no order is queued in Redis or awaiting payment, and every expired or cancelled one is restored (60 s at most). */
async function settled(redis: Redis, db: pg.Pool, saleId: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const queued = await redis.hlen(saleKeys(saleId).orders);
    const { rows } = await db.query<{ n: string }>(
      "select count(*) as n from orders where sale_id = $1 and (status = 'awaiting_payment' or (status in ('expired', 'cancelled') and restored_at is null))",
      [saleId],
    );
    if (queued === 0 && Number(rows[0]?.n) === 0) return;
    await sleep(1_000);
  }
}

async function createSale(t: Target, s: { stock: number; startsAt: number; endsAt: number }) {
  const res = await fetch(`${t.baseUrl}/api/admin/sales`, {
    method: "POST",
    headers: { authorization: `Bearer ${t.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({
      productId: `crowd-${Date.now().toString(36)}`,
      name: "Room crowd",
      priceCents: 4_900,
      stock: s.stock,
      perUserLimit: 2,
      startsAt: new Date(s.startsAt).toISOString(),
      endsAt: new Date(s.endsAt).toISOString(),
      paymentWindowSeconds: 15,
      admission: "queue",
    }),
  });
  if (res.status !== 201) throw new Error(`create crowd sale: ${res.status} ${await res.text()}`);
  return (await res.json()) as { saleId: string; productToken: string };
}
