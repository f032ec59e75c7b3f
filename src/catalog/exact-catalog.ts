import { catalogKeys } from "../stock/keys";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";

/** Up to this many product tokens, a process keeps every one with its sale (about 150 bytes each). */
export const EXACT_CATALOG_MAX = 20_000;

/**
 * Every product token with its sale, read with the filter: a lookup in it replaces both the Bloom
 * filter's hashing and the HGET of a token that passes it. Tokens registered after the read are
 * unknown until the version check reloads the catalog, as they are to a filter read at the same time.
 */
export async function loadExact(redis: Redis): Promise<Map<string, string> | null> {
  const flat = await withRedis(() => redis.hgetall(catalogKeys.tokens)).catch(() => null);
  if (!Array.isArray(flat)) return null;
  const exact = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) exact.set(String(flat[i]), String(flat[i + 1]));
  return exact;
}
