import type { Redis } from "ioredis";

/**
 * Every key and value in the Redis database, as plain data: two equal snapshots mean nothing changed.
 * Rate-limit counters (`…:rl:…`) are left out: they expire on their own between two snapshots. Tests
 * that need to know no script ran count commands instead ({@link commandCounts}).
 */
export async function snapshot(redis: Redis): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const keys = (await redis.keys("*")).filter((k) => !k.includes(":rl:")).sort();
  for (const key of keys) {
    const type = await redis.type(key);
    if (type === "string") out[key] = await redis.get(key);
    else if (type === "hash") out[key] = await redis.hgetall(key);
    else if (type === "set") out[key] = (await redis.smembers(key)).sort();
    else if (type === "zset") out[key] = await redis.call("ZRANGE", key, "0", "-1", "WITHSCORES");
    else if (type === "list") out[key] = await redis.lrange(key, 0, -1);
    else out[key] = type;
  }
  return out;
}

/** Calls per command from INFO commandstats (e.g. { evalsha: 12, get: 3 }). */
export async function commandCounts(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info("commandstats");
  const counts: Record<string, number> = {};
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) counts[m[1] as string] = Number(m[2]);
  return counts;
}

/** Commands run between two {@link commandCounts} readings, leaving out the INFO calls themselves. */
export function commandDelta(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  const delta: Record<string, number> = {};
  for (const [name, calls] of Object.entries(after)) {
    const d = calls - (before[name] ?? 0) - (name === "info" ? 1 : 0);
    if (d > 0) delta[name] = d;
  }
  return delta;
}

export const total = (delta: Record<string, number>) => Object.values(delta).reduce((s, n) => s + n, 0);
