import { Client as QStashClient } from "@upstash/qstash";
import { Redis as UpstashRedis } from "@upstash/redis/cloudflare";
import type { Db } from "./db/client";
import { type Config, ConfigError } from "./env";
import { createMemory, type Memory } from "./memory/memory";
import type { Defer } from "./runtime/task-set";
import { connectPostgresHttp } from "./stores/postgres-http";
import { type QStashPublisher, withPublishTimeout } from "./stores/qstash-publisher";
import type { RedisStore } from "./stores/redis-store";
import type { SqlStore } from "./stores/sql-store";

export type { Defer } from "./runtime/task-set";

const REDIS_TIMEOUT_MS = 2_000;

/**
 * What the engine runs on, built once per isolate (Workers) or process (Deno, Bun) from the parsed
 * settings and handed to the app and the scheduled handler: nothing below builds a client itself.
 */
export type Services = {
  config: Config;
  /** Redis, with EVALSHA / EVAL for the Lua scripts (src/stock/script.ts). */
  redis: RedisStore;
  db: Db;
  /** Publishes the order pipeline's jobs (src/orders/enqueue-order.ts); each publish times out. */
  qstash: QStashPublisher;
  /** What this isolate or process remembers between requests (src/memory/memory.ts). */
  memory: Memory;
  /** Milliseconds since the epoch (the store's clock is src/stores/store-clock.ts). */
  clock: () => number;
  /** Which drivers were chosen (logged at start by server runtimes). */
  drivers: { redis: "upstash-rest" | "tcp"; db: "neon-http" | "tcp" };
  /** Closes what holds connections (server runtimes, on shutdown). */
  close(): Promise<void>;
};

/** What one request or one scheduled run works with: the services, its clock reading, its background runner. */
export type Deps = Omit<Services, "close" | "clock" | "drivers"> & { now: number; defer: Defer };

/** What publishing the order pipeline's jobs needs: the settings (job URLs) and QStash (src/orders/enqueue-order.ts). */
export type PublishDeps = Pick<Services, "config" | "qstash">;

/** What an order's lifecycle needs (write, pay, cancel, expire, restore: src/orders/). */
export type LifecycleDeps = Pick<Deps, "redis" | "db" | "now" | "config" | "qstash" | "memory">;

/** What reading one order for its owner needs: the stores, and what the process already knows (src/orders/order-reads.ts). */
export type OrderReadDeps = Pick<Deps, "redis" | "db" | "memory" | "now">;

/** What checking a shopper token needs: the settings, and the shop's key set as this process knows it (src/identity/). */
export type IdentityDeps = Pick<Deps, "config" | "memory">;

/** What the shopper routes' request limits need: counts in memory, the store past the local share (src/limits/). */
export type LimitDeps = Pick<Deps, "config" | "redis" | "memory" | "now" | "defer">;

/** What rebuilding a sale's Redis state from Postgres needs (src/recovery/). */
export type RebuildDeps = LifecycleDeps & Partial<Pick<Deps, "defer">>;

/** TCP drivers, which only server runtimes can use; a Workers build does not bundle them. */
export type TcpConnectors = {
  redis(url: string): RedisStore & { close(): Promise<void> };
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
 *   with the NOSCRIPT fallback, pipelined); else the Upstash REST client (every runtime; retries only
 *   network errors, briefly: callers that change state pass ids that make a repeated script a replay).
 * - Postgres: {@link databaseDriver}: Neon HTTP (src/stores/postgres-http.ts) or a TCP pool
 *   (src/stores/postgres-tcp.ts, server runtimes only).
 * - QStash: the client, pointed at QSTASH_URL when set (locally, the stand-in), each publish failing
 *   after 5 s without an answer (src/stores/qstash-publisher.ts).
 *
 * @example
 * const services = createServices(readConfig(env));                 // Workers
 * const services = createServices(config, { tcp: tcpConnectors });  // Deno, Bun
 */
export function createServices(
  config: Config,
  options: { clock?: () => number; tcp?: TcpConnectors } = {},
): Services {
  const closers: Array<() => Promise<void>> = [];
  let redis: RedisStore;
  if (config.REDIS_URL) {
    if (!options.tcp)
      throw new ConfigError("REDIS_URL needs a server runtime (Deno, Bun); set UPSTASH_REDIS_REST_*");
    const tcp = options.tcp.redis(config.REDIS_URL);
    closers.push(() => tcp.close());
    redis = tcp;
  } else {
    redis = new UpstashRedis({
      url: config.UPSTASH_REDIS_REST_URL as string,
      token: config.UPSTASH_REDIS_REST_TOKEN as string,
      automaticDeserialization: false,
      enableTelemetry: false,
      retry: { retries: 2, backoff: (n) => 25 * 2 ** n },
      signal: () => AbortSignal.timeout(REDIS_TIMEOUT_MS),
    });
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
    memory: createMemory({
      saleFeedMs: config.REALTIME_REFRESH_MS,
      orderFeedMs: config.REALTIME_REFRESH_MS * 2,
    }),
    clock: options.clock ?? Date.now,
    drivers: {
      redis: config.REDIS_URL ? "tcp" : "upstash-rest",
      db: dbDriver === "tcp" ? "tcp" : "neon-http",
    },
    close: async () => {
      for (const close of closers) await close().catch(() => undefined);
    },
  };
}

/** The deps of one request or scheduled run: the services, read at `now`, deferring to `defer`. */
export function depsAt(services: Services, defer: Defer): Deps {
  const { close: _close, clock, drivers: _drivers, ...rest } = services;
  return { ...rest, now: clock(), defer };
}
