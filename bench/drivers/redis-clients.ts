/**
 * Which TCP Redis client the server runtimes use: ioredis (Node, Bun, Deno's npm compatibility) or
 * Bun's built-in `RedisClient` (Bun only). One connection per client, 50 concurrent callers, each
 * issuing calls back to back: a reserve-like EVALSHA (HGET, DECRBY, HINCRBY, one reply array) and
 * plain GETs. Prints calls/s and the process's CPU µs per call, one JSON line per client.
 *
 * @example
 * npx tsx bench/drivers/redis-clients.ts              # Node: ioredis
 * npx bun bench/drivers/redis-clients.ts              # Bun: ioredis and Bun's RedisClient
 * npx deno run -A bench/drivers/redis-clients.ts      # Deno: ioredis
 */
import { createHash } from "node:crypto";
import process from "node:process";
import Redis from "ioredis";
import { startRedis } from "../../local/redis-process";
import { backToBack, CALLERS, runtime } from "./callers";

const CALLS = Number(process.env.BENCH_CALLS ?? 40_000);

const SCRIPT = `
local limit = tonumber(redis.call("HGET", KEYS[1], "perUserLimit") or "0")
local left = tonumber(redis.call("GET", KEYS[2]) or "0")
if left < tonumber(ARGV[2]) then return {3, left} end
local now = redis.call("DECRBY", KEYS[2], ARGV[2])
redis.call("HINCRBY", KEYS[3], ARGV[1], ARGV[2])
return {1, ARGV[1], now, limit}`;
const SHA = createHash("sha1").update(SCRIPT).digest("hex");

type Client = {
  name: string;
  evalsha(keys: string[], args: string[]): Promise<unknown>;
  get(key: string): Promise<unknown>;
  close(): Promise<void> | void;
};

function ioredis(url: string, autoPipelining: boolean): Client {
  const r = new Redis(url, { enableAutoPipelining: autoPipelining, maxRetriesPerRequest: 1 });
  return {
    name: autoPipelining ? "ioredis-autopipelining" : "ioredis",
    evalsha: (keys, args) => r.evalsha(SHA, keys.length, ...keys, ...args),
    get: (key) => r.get(key),
    close: () => void r.disconnect(),
  };
}

function bunRedis(url: string): Client | null {
  const bun = (globalThis as { Bun?: { RedisClient: new (url: string) => BunRedis } }).Bun;
  if (!bun) return null;
  const r = new bun.RedisClient(url);
  return {
    name: "bun-redis",
    evalsha: (keys, args) => r.send("EVALSHA", [SHA, String(keys.length), ...keys, ...args]),
    get: (key) => r.get(key),
    close: () => r.close(),
  };
}
type BunRedis = {
  send(cmd: string, args: string[]): Promise<unknown>;
  get(key: string): Promise<unknown>;
  close(): void;
};

const server = process.env.REDIS_URL ? null : await startRedis({ port: 0 });
const url = process.env.REDIS_URL ?? server?.url ?? "";
const admin = new Redis(url);
await admin.script("LOAD", SCRIPT);
for (const client of [ioredis(url, false), ioredis(url, true), bunRedis(url)]) {
  if (!client) continue;
  await admin.hset("b:meta", "perUserLimit", "2");
  await admin.set("b:stock", String(CALLS * 4));
  await backToBack(2_000, (i) => client.evalsha(["b:meta", "b:stock", "b:holdings"], [`u${i % 1000}`, "1"]));
  const evalsha = await backToBack(CALLS, (i) =>
    client.evalsha(["b:meta", "b:stock", "b:holdings"], [`u${i % 1000}`, "1"]),
  );
  const get = await backToBack(CALLS, () => client.get("b:stock"));
  console.log(JSON.stringify({ runtime, client: client.name, callers: CALLERS, calls: CALLS, evalsha, get }));
  await client.close();
}
admin.disconnect();
await server?.stop();
process.exit(0);
