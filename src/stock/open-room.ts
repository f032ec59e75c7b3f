import openRoomLua from "../../lua/open-room.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const openRoomScript = defineScript(
  "open-room",
  openRoomLua,
  "98191d5fa2abefaec26672fbbfe858223d63a247",
);

/** Writes the room's seed and its hash unless it has a seed (open-room.lua); true when written now. */
export async function writeRoomSeed(
  redis: Redis,
  saleId: string,
  seed: { seed: string; seedHash: string },
): Promise<boolean> {
  const reply = await withRedis(() =>
    runScript(redis, openRoomScript, [saleKeys(saleId).room], [seed.seed, seed.seedHash]),
  );
  return codeOf("open-room", reply, ["OK", "ALREADY_EXISTS"] as const) === "OK";
}
