import setSalePausedLua from "../../lua/set-sale-paused.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const setSalePausedScript = defineScript(
  "set-sale-paused",
  setSalePausedLua,
  "e76e7708d3dcf10c3d9cf85bf66ffa8250a25dee",
);

/**
 * Sets or clears the pause flag the reservation script reads. A sale that is not in Redis is left alone
 * (false): the flag alone would make a partial sale; the rebuild takes the flag from Postgres.
 */
export async function setSalePaused(redis: Redis, saleId: string, paused: boolean): Promise<boolean> {
  const reply = await withRedis(() =>
    runScript(redis, setSalePausedScript, [saleKeys(saleId).meta], [paused ? "1" : "0"]),
  );
  return codeOf("set-sale-paused", reply, ["OK", "NOT_INITIALISED"] as const) === "OK";
}
