import setSalePausedLua from "../../lua/set-sale-paused.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const setSalePausedScript = defineScript(
  "set-sale-paused",
  setSalePausedLua,
  "37aabcc4e61404d043bf050fcbce7940ab14076e",
);

/**
 * Sets or clears the pause flag the reservation script reads, as of `version` (the sale's
 * `pause_version` in Postgres after this pause or resume, see setSalePausedInDb): a write older than
 * the one Redis holds changes nothing, so concurrent calls end as Postgres ends. A sale that is not in
 * Redis is left alone: the flag alone would make a partial sale; the rebuild takes the flag from Postgres.
 * A queue or draw sale's pause is time out of its running admissions: at `now` (the store's clock) the
 * pause is noted in its room, and the resume moves their ends by the pause's length, in the same step.
 * True when the flag was written.
 */
/** set-sale-paused.lua's KEYS, in order (the tests drive the script with the same layout). */
export function pauseKeys(saleId: string): string[] {
  const k = saleKeys(saleId);
  return [k.meta, k.room, k.tickets, k.active, k.journal];
}

export async function setSalePaused(
  redis: Redis,
  saleId: string,
  paused: boolean,
  at: { version: number; now: number },
): Promise<boolean> {
  const reply = await withRedis(() =>
    runScript(redis, setSalePausedScript, pauseKeys(saleId), [
      paused ? "1" : "0",
      String(at.version),
      String(at.now),
    ]),
  );
  return codeOf("set-sale-paused", reply, ["OK", "NOT_INITIALISED", "STALE"] as const) === "OK";
}
