import { Client as QStashClient } from "@upstash/qstash";
import { Redis } from "@upstash/redis/cloudflare";
import { connectDb, type Db } from "./db/client";
import type { Config } from "./env";
import type { Defer } from "./runtime/task-set";

export type { Defer } from "./runtime/task-set";

const REDIS_TIMEOUT_MS = 2_000;

/**
 * What the engine runs on, built once per isolate (Workers) or process (Deno, Bun) from the parsed
 * settings and handed to the app and the scheduled handler: nothing below builds a client itself.
 */
export type Services = {
  config: Config;
  /** Redis, with `createScript` for the Lua scripts (src/sale/scripts.ts). */
  redis: Redis;
  db: Db;
  /** Publishes the order pipeline's jobs (src/orders/enqueue-order.ts). */
  qstash: QStashClient;
  /** Milliseconds since the epoch (the store's clock is src/sale/store-clock.ts). */
  clock: () => number;
  /** Closes what holds connections (server runtimes, on shutdown). */
  close(): Promise<void>;
};

/** What one request or one scheduled run works with: the services, its clock reading, its background runner. */
export type Deps = Omit<Services, "close" | "clock"> & { now: number; defer: Defer };

/**
 * Builds the services from parsed settings.
 *
 * - Redis: the Upstash REST client (retries only network errors, briefly: callers that change state pass
 *   ids that make a repeated script a replay, so a retry never reserves twice; replies are not
 *   JSON-decoded: scripts return plain arrays).
 * - Postgres: drizzle over Neon's SQL-over-HTTP driver (src/db/client.ts).
 * - QStash: the client, pointed at QSTASH_URL when set (locally, the stand-in).
 *
 * @example
 * const services = createServices(readConfig(env));
 * const app = createApp({ services: () => services, ... });
 */
export function createServices(config: Config, options: { clock?: () => number } = {}): Services {
  const redis = new Redis({
    url: config.UPSTASH_REDIS_REST_URL,
    token: config.UPSTASH_REDIS_REST_TOKEN,
    automaticDeserialization: false,
    enableTelemetry: false,
    retry: { retries: 2, backoff: (n) => 25 * 2 ** n },
    signal: () => AbortSignal.timeout(REDIS_TIMEOUT_MS),
  });
  const qstash = new QStashClient({
    token: config.QSTASH_TOKEN,
    ...(config.QSTASH_URL ? { baseUrl: config.QSTASH_URL } : {}),
    retry: { retries: 2, backoff: (n) => 50 * 2 ** n },
  });
  return {
    config,
    redis,
    db: connectDb(config),
    qstash,
    clock: options.clock ?? Date.now,
    close: async () => {},
  };
}

/** The deps of one request or scheduled run: the services, read at `now`, deferring to `defer`. */
export function depsAt(services: Services, defer: Defer): Deps {
  const { close: _close, clock, ...rest } = services;
  return { ...rest, now: clock(), defer };
}
