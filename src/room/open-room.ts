import { writeRoomSeed } from "../stock/open-room";
import type { RedisStore as Redis } from "../stores/redis-store";
import { newSeed, sha256Hex } from "./draw";

/**
 * Opens the waiting room of a queue or draw sale: its secret seed and the seed's SHA-256, published from
 * then on (GET /api/sales/:saleId/draw). Once: a room that has its seed keeps it. Called before the
 * sale's meta is written (so no step finds a sale without its seed) and by every rebuild (a room lost
 * with Redis gets a new seed, published as such, rather than none). A rebuild after the sale's start
 * passes `admitFrom`: a lost room admits nobody before it (the admissions given before the loss, whose
 * holds it forgot, run out first), and its `quiet` period: time out of the admissions a kept room runs
 * (nobody may buy meanwhile), so their ends move by its length.
 */
export async function openRoom(
  redis: Redis,
  saleId: string,
  admitFrom = 0,
  quiet?: { from: number; until: number },
): Promise<void> {
  const seed = newSeed();
  await writeRoomSeed(redis, saleId, { seed, seedHash: await sha256Hex(seed) }, admitFrom, quiet);
}
