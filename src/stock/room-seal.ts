import roomSealLua from "../../lua/room-seal.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const roomSealScript = defineScript(
  "room-seal",
  roomSealLua,
  "87f174f4b2b9a785533149b017d4cecb4eca0074",
);

export type SealOutcome = "sealed" | "already_sealed" | "line_changed";

const CODES = ["OK", "ALREADY_EXISTS", "STALE"] as const;

/**
 * Seals the room's line (room-seal.lua): the tickets taken before the start in `ranked` order, then
 * the later ones as they came; `line_changed` when a ticket joined since the caller read the line.
 */
export async function sealRoomLine(
  redis: Redis,
  saleId: string,
  at: { now: number; entriesHash: string; entries: string[]; ranked: string[] },
): Promise<SealOutcome> {
  const k = saleKeys(saleId);
  const keys = [k.room, k.tickets, k.line, k.late, k.entries, k.journal];
  const args = [at.now, at.entriesHash, JSON.stringify(at.entries), ...at.ranked];
  const reply = await withRedis(() => runScript(redis, roomSealScript, keys, args));
  switch (codeOf("room-seal", reply, CODES)) {
    case "OK":
      return "sealed";
    case "ALREADY_EXISTS":
      return "already_sealed";
    case "STALE":
      return "line_changed";
  }
}
