import type { LifecycleDeps } from "../services";
import { writeRoomSeed } from "../stock/open-room";
import { newSeed, sha256Hex } from "./draw";
import { recordRoomSeed, restartRoomRecord } from "./room-record";

/**
 * Opens the waiting room of a queue or draw sale: its secret seed and the seed's SHA-256, published from
 * then on (GET /api/sales/:saleId/draw). The seed is recorded in Postgres first (the one recorded stays:
 * a retried create), then given to Redis once: a room that has its seed keeps it. Called before the
 * sale's meta is written, so no step finds a sale without its seed.
 */
export async function openRoom(deps: Pick<LifecycleDeps, "db" | "redis">, saleId: string): Promise<void> {
  await writeRoomSeed(deps.redis, saleId, await recordRoomSeed(deps.db, saleId));
}

/**
 * A rebuild's step of a queue or draw sale's room, after `restoreRoom` (src/room/room-record.ts): its
 * running admissions get the quiet period back (nobody may buy meanwhile: their ends move by its
 * length). A room its record could not give back ("unrecorded": a sale from before records, lost) starts
 * again with its recorded seed in a new life, and, lost after the start, admits nobody before
 * `admitFrom` (the admissions given before the loss, whose holds it forgot, run out first).
 */
export async function reopenRoom(
  deps: Pick<LifecycleDeps, "db" | "redis">,
  saleId: string,
  how: "restored" | "kept" | "unrecorded",
  admitFrom: number,
  quiet: { from: number; until: number },
): Promise<void> {
  if (how === "unrecorded") {
    await writeRoomSeed(deps.redis, saleId, await restartRoomRecord(deps.db, saleId), admitFrom, quiet);
    return;
  }
  // the room has its seed (kept or just restored): only the quiet period is written; the seed passed is
  // never stored (open-room.lua keeps the one the room has)
  const seed = newSeed();
  await writeRoomSeed(deps.redis, saleId, { seed, seedHash: await sha256Hex(seed) }, 0, quiet);
}
