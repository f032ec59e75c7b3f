import releaseLockLua from "../../lua/release-lock.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { codeOf } from "./codes";
import { defineScript, runScript } from "./script";

export const releaseLockScript = defineScript(
  "release-lock",
  releaseLockLua,
  "c21ad39975467fb4387b6b430be0193d4a3cfb13",
);

/** Deletes `lock` only while it still holds `token`: false when another holder has it now. */
export async function releaseLock(redis: Redis, lock: string, token: string): Promise<boolean> {
  const reply = await runScript(redis, releaseLockScript, [lock], [token]);
  return codeOf("release-lock", reply, ["OK", "NOT_HELD"] as const) === "OK";
}
