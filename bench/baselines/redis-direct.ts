/**
 * The store-level baseline for Redis: the project's reservation script (`lua/reserve-stock.lua`, loaded
 * with SCRIPT LOAD) run by `redis-benchmark` with EVALSHA straight against the same redis-server, no
 * HTTP in between. Two paths: "reserve" (stock to spare, a fresh random user and order id per call, so
 * every call reserves) and "sold out" (stock 0). Each run is measured from commandstats and INFO cpu.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { saleKeys } from "../../src/stock/keys";
import { reserveScriptCall } from "../../src/stock/reserve-call";
import { type RedisDelta, RedisStats } from "../measure/redis-stats";

export type DirectRun = {
  path: "reserve" | "sold out";
  clients: number;
  pipeline: number;
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  redis: RedisDelta;
};

const root = resolve(import.meta.dirname, "..", "..");
const SALE = "benchdirect";

/** True when the redis-benchmark binary is there. */
export async function hasRedisBenchmark(): Promise<boolean> {
  return promisify(execFile)("redis-benchmark", ["--version"]).then(
    () => true,
    () => false,
  );
}

export async function redisDirect(
  stats: RedisStats,
  redisUrl: string,
  options: { clients: number; requests: number },
): Promise<DirectRun[]> {
  const redis = stats.client;
  const sha = String(
    await redis.call("SCRIPT", "LOAD", readFileSync(join(root, "lua", "reserve-stock.lua"), "utf8")),
  );
  const keys = saleKeys(SALE);
  const now = Date.now();
  await redis.hset(keys.meta, {
    startsAt: now - 1_000,
    endsAt: now + 3_600_000,
    paused: "0",
    perUserLimit: 2,
    paymentWindowMs: 3_600_000,
  });
  const url = new URL(redisUrl);
  const call = reserveScriptCall(
    {
      saleId: SALE,
      orderId: `${SALE}-__rand_int__`,
      userId: "u__rand_int__",
      ip: "direct",
      quantity: 1,
      idempotencyKey: null,
      now,
    },
    { userPerWindow: 1_000_000_000, ipPerWindow: 1_000_000_000, windowMs: 10_000 },
  );
  const args = ["EVALSHA", sha, String(call.keys.length), ...call.keys, ...call.args];
  const runs: DirectRun[] = [];
  const plans = [
    { path: "reserve" as const, stock: 1_000_000_000, pipeline: 1 },
    { path: "reserve" as const, stock: 1_000_000_000, pipeline: 16 },
    { path: "sold out" as const, stock: 0, pipeline: 1 },
  ];
  for (const plan of plans) {
    await redis.set(keys.stock, String(plan.stock));
    const before = await stats.snapshot();
    const { stdout } = await promisify(execFile)(
      "redis-benchmark",
      [
        ...["-h", url.hostname, "-p", url.port || "6379", "-c", String(options.clients)],
        ...["-n", String(options.requests), "-P", String(plan.pipeline), "-r", "1000000000", "--csv"],
        ...args,
      ],
      { maxBuffer: 1 << 20 },
    );
    const after = await stats.snapshot();
    // "test","rps","avg","min","p50","p95","p99","max": read from the end (the test name is free text).
    const row = (stdout.trim().split("\n").at(-1) ?? "").split(",").map((c) => Number(c.replace(/"/g, "")));
    const field = (fromEnd: number) => row[row.length - fromEnd] ?? Number.NaN;
    runs.push({
      path: plan.path,
      clients: options.clients,
      pipeline: plan.pipeline,
      requests: options.requests,
      perSecond: Math.round(field(7)),
      p50Ms: field(4),
      p99Ms: field(2),
      redis: RedisStats.delta(before, after),
    });
  }
  await redis.del(keys.meta, keys.stock, keys.holdings, keys.ledger, keys.orders, keys.outbox, keys.timeline);
  return runs;
}
