import { Cluster, type Redis } from "ioredis";
import { LOOPBACK } from "../../local/ports";
import { startRedisCluster } from "../../local/redis-cluster";
import { type RedisProcess, startRedis } from "../../local/redis-process";
import type { Stack } from "../../local/stack";
import { startUpstashRedisServer, type UpstashRedisServer } from "../../local/upstash-redis-server";
import { databasesView } from "./databases-view";
import type { RuntimeName } from "./test-runtime";

/** The stores a test's engine runs over, besides the stack's one server: its settings and the test's view. */
export type StoreLayout = {
  vars: Record<string, string>;
  /** The servers holding the data (a Cluster's nodes; the databases' redis-servers, in the engine's order). */
  servers: RedisProcess[];
  /** A new connection (or set of them) to every store, as the test inspects them. */
  inspect(): Redis;
  stop(): Promise<void>;
};

/** Settings that give the engine stores of its own: a file that sets one keeps its layout. */
const OWN_STORE = ["REDIS_CLUSTER_NODES", "UPSTASH_REDIS_REST_URLS", "UPSTASH_REDIS_REST_URL", "REDIS_URL"];

/**
 * The layout a file asks for (`layout`), else the one FLASH_STORES_LAYOUT asks for, started beside the stack:
 * - `cluster` (Deno and Bun): a real 3-master Redis Cluster (`REDIS_CLUSTER_NODES`), seen through an
 *   ioredis `Cluster`;
 * - `databases` (every runtime): three Upstash databases (`UPSTASH_REDIS_REST_URLS`): the stack's
 *   stand-in and two more, each on its own redis-server, seen through {@link databasesView}.
 * Null (the stack's one server) when unset, when the runtime has no such layout, when the file keeps the
 * one server (`oneServer`: it stops, pauses, restarts or flushes it) or sets stores of its own.
 */
export async function startStoreLayout(
  runtime: RuntimeName,
  stack: Stack,
  vars: Record<string, string>,
  opts: { oneServer?: boolean; layout?: "cluster" | "databases" },
): Promise<StoreLayout | null> {
  const layout = opts.layout ?? process.env.FLASH_STORES_LAYOUT;
  if (!layout || opts.oneServer || OWN_STORE.some((name) => vars[name])) return null;
  if (layout === "cluster" && runtime !== "workers") {
    const cluster = await startRedisCluster({ masters: 3 });
    const seeds = cluster.nodes.map((n) => ({ host: LOOPBACK, port: n.port }));
    return {
      vars: { REDIS_CLUSTER_NODES: cluster.urls.join(",") },
      servers: cluster.nodes,
      inspect: () => new Cluster(seeds, { redisOptions: { maxRetriesPerRequest: 1 } }) as unknown as Redis,
      stop: () => cluster.stop(),
    };
  }
  if (layout === "databases") {
    const token = stack.vars.UPSTASH_REDIS_REST_TOKEN ?? "";
    const extra: { redis: RedisProcess; upstash: UpstashRedisServer }[] = [];
    const stop = async () => {
      for (const e of extra) {
        await e.upstash.close().catch(() => undefined);
        await e.redis.stop().catch(() => undefined);
      }
    };
    try {
      for (let i = 0; i < 2; i++) {
        const redis = await startRedis();
        extra.push({ redis, upstash: await startUpstashRedisServer({ redisUrl: redis.url, token }) });
      }
    } catch (error) {
      await stop();
      throw error;
    }
    const restUrls = [stack.vars.UPSTASH_REDIS_REST_URL ?? "", ...extra.map((e) => e.upstash.url)];
    return {
      vars: {
        UPSTASH_REDIS_REST_URLS: restUrls.join(","),
        UPSTASH_REDIS_REST_TOKENS: restUrls.map(() => token).join(","),
      },
      servers: [stack.redis, ...extra.map((e) => e.redis)],
      inspect: () => databasesView([stack.redis.url, ...extra.map((e) => e.redis.url)]),
      stop,
    };
  }
  return null;
}
