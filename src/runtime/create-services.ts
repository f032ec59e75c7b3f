import { Client as QStashClient } from "@upstash/qstash";
import { Redis as UpstashRedis } from "@upstash/redis/cloudflare";
import type { Db } from "../db/client";
import type { SqlStore } from "../db/sql-store";
import { type Config, ConfigError } from "../env";
import { createMemory } from "../memory/memory";
import { stripeProvider } from "../payments/stripe-provider";
import type { Metrics, ResolveHost, Services } from "../services";
import { connectPostgresHttp } from "../stores/postgres-http";
import { withPublishTimeout } from "../stores/qstash-publisher";
import type { RedisStore } from "../stores/redis-store";
import { shardedStore } from "../stores/sharded-store";

const REDIS_TIMEOUT_MS = 2_000;

/** What a TCP Redis connection is given from the settings: replicas a script's writes must reach (0: none). */
export type RedisConnectOptions = { replicaAcks: { replicas: number; timeoutMs: number } };

/** TCP drivers, which only server runtimes can use; a Workers build does not bundle them. */
export type TcpConnectors = {
  redis(url: string, options: RedisConnectOptions): RedisStore & { close(): Promise<void> };
  /** a Redis Cluster from its seed nodes */
  redisCluster(seeds: string[], options: RedisConnectOptions): RedisStore & { close(): Promise<void> };
  postgres(url: string): SqlStore & { close(): Promise<void> };
};

/**
 * The database driver: DATABASE_DRIVER when set; else `http` (Neon's SQL over HTTP) when
 * NEON_HTTP_ENDPOINT is set or the host is Neon's (`*.neon.tech`), or when there is no TCP driver
 * (Workers); else `tcp` (a pool).
 */
export function databaseDriver(config: Config, tcpAvailable: boolean): "http" | "tcp" {
  if (config.DATABASE_DRIVER) return config.DATABASE_DRIVER;
  if (!tcpAvailable || config.NEON_HTTP_ENDPOINT) return "http";
  const host = /@([^/:?]+)/.exec(config.DATABASE_URL)?.[1] ?? "";
  return host.endsWith(".neon.tech") ? "http" : "tcp";
}

/**
 * Builds the services from parsed settings. The stores are chosen explicitly:
 *
 * - Redis: REDIS_URL set → one TCP connection (src/stores/redis-tcp.ts, server runtimes only: EVALSHA
 *   with the NOSCRIPT fallback, pipelined); REDIS_CLUSTER_NODES set → a Redis Cluster from those seeds
 *   (the same file; each sale's keys in one slot); with REDIS_REPLICA_ACKS, a script counts once that
 *   many replicas hold its writes; else the Upstash REST client (every runtime; retries only
 *   network errors, briefly: callers that change state pass ids that make a repeated script a replay).
 * - Postgres: {@link databaseDriver}: Neon HTTP (src/stores/postgres-http.ts) or a TCP pool
 *   (src/stores/postgres-tcp.ts, server runtimes only).
 * - QStash: the client, pointed at QSTASH_URL when set (locally, the stand-in), each publish failing
 *   after 5 s without an answer (src/stores/qstash-publisher.ts).
 *
 * @example
 * const services = createServices(readConfig(env));                 // Workers
 * const services = createServices(config, { tcp: tcpConnectors, resolveHost }); // Deno, Bun
 */
export function createServices(
  config: Config,
  options: {
    clock?: () => number;
    tcp?: TcpConnectors;
    resolveHost?: ResolveHost;
    /** the process's counts (server runtimes); none by default */
    metrics?: Metrics;
  } = {},
): Services {
  const closers: Array<() => Promise<void>> = [];
  let redis: RedisStore;
  const seeds = config.REDIS_CLUSTER_NODES?.split(",").map((seed) => seed.trim());
  if (config.REDIS_URL || seeds) {
    if (!options.tcp)
      throw new ConfigError(
        `${seeds ? "REDIS_CLUSTER_NODES" : "REDIS_URL"} needs a server runtime (Deno, Bun); set UPSTASH_REDIS_REST_*`,
      );
    const connect: RedisConnectOptions = {
      replicaAcks: { replicas: config.REDIS_REPLICA_ACKS, timeoutMs: config.REDIS_REPLICA_ACK_TIMEOUT_MS },
    };
    const tcp = seeds
      ? options.tcp.redisCluster(seeds, connect)
      : options.tcp.redis(config.REDIS_URL as string, connect);
    closers.push(() => tcp.close());
    redis = tcp;
  } else {
    const upstash = (url: string, token: string): RedisStore =>
      new UpstashRedis({
        url,
        token,
        automaticDeserialization: false,
        enableTelemetry: false,
        retry: { retries: 2, backoff: (n) => 25 * 2 ** n },
        signal: () => AbortSignal.timeout(REDIS_TIMEOUT_MS),
      });
    if (config.UPSTASH_REDIS_REST_URLS) {
      // several databases, each sale in one (the URLs' order is where every sale lives: keep it)
      const tokens = (config.UPSTASH_REDIS_REST_TOKENS ?? "").split(",").map((t) => t.trim());
      const urls = config.UPSTASH_REDIS_REST_URLS.split(",").map((u) => u.trim());
      redis = shardedStore(urls.map((url, i) => upstash(url, tokens[i] as string)));
    } else {
      redis = upstash(config.UPSTASH_REDIS_REST_URL as string, config.UPSTASH_REDIS_REST_TOKEN as string);
    }
  }
  const dbDriver = databaseDriver(config, options.tcp !== undefined);
  let db: Db;
  if (dbDriver === "tcp") {
    if (!options.tcp) throw new ConfigError("DATABASE_DRIVER=tcp needs a server runtime (Deno, Bun)");
    const pool = options.tcp.postgres(config.DATABASE_URL);
    closers.push(() => pool.close());
    db = pool;
  } else {
    db = connectPostgresHttp(config.DATABASE_URL, {
      ...(config.NEON_HTTP_ENDPOINT ? { endpoint: config.NEON_HTTP_ENDPOINT } : {}),
    });
  }
  const qstash = withPublishTimeout(
    new QStashClient({
      token: config.QSTASH_TOKEN,
      ...(config.QSTASH_URL ? { baseUrl: config.QSTASH_URL } : {}),
      retry: { retries: 2, backoff: (n) => 50 * 2 ** n },
    }),
  );
  return {
    config,
    redis,
    db,
    qstash,
    payments:
      config.PAYMENT_PROVIDER === "stripe"
        ? stripeProvider({
            secretKey: config.STRIPE_SECRET_KEY as string,
            webhookSecret: config.STRIPE_WEBHOOK_SECRET as string,
            apiBase: config.STRIPE_API_BASE,
          })
        : null,
    memory: createMemory({
      saleFeedMs: config.REALTIME_REFRESH_MS,
      orderFeedMs: config.REALTIME_REFRESH_MS * 2,
    }),
    clock: options.clock ?? Date.now,
    resolveHost: options.resolveHost ?? null,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    drivers: {
      redis: seeds ? "tcp-cluster" : config.REDIS_URL ? "tcp" : "upstash-rest",
      db: dbDriver === "tcp" ? "tcp" : "neon-http",
    },
    close: async () => {
      for (const close of closers) await close().catch(() => undefined);
    },
  };
}
