import { saleKeys } from "../stock/keys";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { newSeed, sha256Hex } from "./draw";

/**
 * Opens the waiting room of a new queue or draw sale (its id is fresh): its secret seed and the seed's
 * SHA-256, published from now on (GET /api/sales/:saleId/draw).
 */
export async function openRoom(redis: Redis, saleId: string): Promise<void> {
  const seed = newSeed();
  const seedHash = await sha256Hex(seed);
  await withRedis(() => redis.hset(saleKeys(saleId).room, { seed, seedHash }));
}
