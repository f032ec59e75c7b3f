import openRoomLua from "../../lua/open-room.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const openRoomScript = defineScript(
  "open-room",
  openRoomLua,
  "c61f7db31eec69a934e3bd48934d8f22ba5830ed",
);

/** open-room.lua's KEYS with a quiet period, in order (the tests drive the script with the same layout). */
export function openRoomKeys(saleId: string): string[] {
  const k = saleKeys(saleId);
  return [k.room, k.meta, k.tickets, k.active, k.journal];
}

/**
 * Writes the room's seed and its hash unless it has a seed (open-room.lua), and then `admitFrom` when
 * given (a rebuild after the start), and the room's life (`gen`, its record's) with the seed; with `quiet` (a rebuild's quiet period, by the store's clock), moves
 * the end of every admission running at its start by its length. True when the seed was written now.
 */
export async function writeRoomSeed(
  redis: Redis,
  saleId: string,
  seed: { seed: string; seedHash: string; gen?: number },
  admitFrom = 0,
  quiet?: { from: number; until: number },
): Promise<boolean> {
  const keys = quiet ? openRoomKeys(saleId) : [saleKeys(saleId).room];
  const args = [seed.seed, seed.seedHash, String(admitFrom)];
  args.push(quiet ? String(quiet.from) : "", quiet ? String(quiet.until) : "", String(seed.gen ?? 0));
  const reply = await withRedis(() => runScript(redis, openRoomScript, keys, args));
  return codeOf("open-room", reply, ["OK", "ALREADY_EXISTS"] as const) === "OK";
}
