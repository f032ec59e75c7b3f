import openRoomLua from "../../lua/open-room.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const openRoomScript = defineScript(
  "open-room",
  openRoomLua,
  "442b0315d700b73c928d097c6ec75c83eacb113f",
);

/**
 * Writes the room's seed and its hash unless it has a seed (open-room.lua), and then `admitFrom` when
 * given (a rebuild after the start); true when written now.
 */
export async function writeRoomSeed(
  redis: Redis,
  saleId: string,
  seed: { seed: string; seedHash: string },
  admitFrom = 0,
): Promise<boolean> {
  const reply = await withRedis(() =>
    runScript(redis, openRoomScript, [saleKeys(saleId).room], [seed.seed, seed.seedHash, String(admitFrom)]),
  );
  return codeOf("open-room", reply, ["OK", "ALREADY_EXISTS"] as const) === "OK";
}
