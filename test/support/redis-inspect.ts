import type { Redis } from "ioredis";

/**
 * Every key and value in the Redis database, as plain data: two equal snapshots mean nothing changed.
 * Rate-limit counters (`…:rl:…`) are left out: they expire on their own between two snapshots. Tests
 * that need to know no script ran count commands instead ({@link commandCounts}).
 */
export async function snapshot(store: Redis): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const redis of mastersOf(store)) await readAll(redis, out);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * The servers holding the data: the one server, or every master of a Cluster (a test run with
 * FLASH_STORES_LAYOUT=cluster inspects the engine's cluster through an ioredis `Cluster`).
 */
function mastersOf(store: Redis): Redis[] {
  const cluster = store as unknown as { isCluster?: boolean; nodes?: (role: "master") => Redis[] };
  return cluster.isCluster && cluster.nodes ? cluster.nodes("master") : [store];
}

async function readAll(redis: Redis, out: Record<string, unknown>): Promise<void> {
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
}

/**
 * Calls per command from INFO commandstats (e.g. { evalsha: 12, get: 3 }), summed over a Cluster's
 * masters; a Cluster's own bookkeeping (`cluster|…`: a client learning the slots) is no data command and
 * is left out, as are the readings' own INFO calls.
 */
export async function commandCounts(store: Redis): Promise<Record<string, number>> {
  const masters = mastersOf(store);
  const counts: Record<string, number> = {};
  for (const redis of masters) {
    const info = await redis.info("commandstats");
    for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
      const name = m[1] as string;
      // the readings' own INFO, one per master, left out with the bookkeeping
      if (masters.length > 1 && (name.startsWith("cluster|") || name === "info")) continue;
      counts[name] = (counts[name] ?? 0) + Number(m[2]);
    }
  }
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
