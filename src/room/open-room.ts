import type { LifecycleDeps } from "../services";
import { writeRoomSeed } from "../stock/open-room";
import { recordRoomSeed } from "./room-record";

/**
 * Opens the waiting room of a queue or draw sale: its secret seed and the seed's SHA-256, published from
 * then on (GET /api/sales/:saleId/draw). The seed is recorded in Postgres first (the one recorded
 * stays: a retried create, a rebuild), then given to Redis once: a room that has its seed keeps it.
 * Called before the sale's meta is written (so no step finds a sale without its seed) and by every
 * rebuild, after the room was restored from its record if Redis lost it (src/room/room-record.ts). A
 * rebuild after the start of a room that has no record (a sale from before records) passes
 * `admitFrom`: that room admits nobody before it (the admissions given before the loss, whose holds it
 * forgot, run out first); and every rebuild its `quiet` period: time out of the admissions the room runs
 * (nobody may buy meanwhile), so their ends move by its length.
 */
export async function openRoom(
  deps: Pick<LifecycleDeps, "db" | "redis">,
  saleId: string,
  admitFrom = 0,
  quiet?: { from: number; until: number },
): Promise<void> {
  const seed = await recordRoomSeed(deps.db, saleId);
  await writeRoomSeed(deps.redis, saleId, seed, admitFrom, quiet);
}
