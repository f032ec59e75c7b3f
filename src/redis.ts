import { Redis } from "@upstash/redis/cloudflare";
import type { Config } from "./env";
import { StoreUnavailableError } from "./errors";

const REQUEST_TIMEOUT_MS = 2_000;
const clients = new Map<string, Redis>();

/**
 * The isolate's Upstash client (one per URL). Retries only network errors, briefly: the callers that
 * change state pass ids that make a repeated script a replay (see reserve-stock.lua), so a retry never
 * reserves twice. Results are not JSON-decoded: scripts return plain arrays.
 */
export function redisClient(config: Config): Redis {
  const existing = clients.get(config.UPSTASH_REDIS_REST_URL);
  if (existing) return existing;
  const client = new Redis({
    url: config.UPSTASH_REDIS_REST_URL,
    token: config.UPSTASH_REDIS_REST_TOKEN,
    automaticDeserialization: false,
    enableTelemetry: false,
    retry: { retries: 2, backoff: (n) => 25 * 2 ** n },
    signal: () => AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  clients.set(config.UPSTASH_REDIS_REST_URL, client);
  return client;
}

/** Runs a Redis call; any failure of the store becomes a {@link StoreUnavailableError} (answered 503). */
export async function withRedis<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new StoreUnavailableError("redis", error);
  }
}
