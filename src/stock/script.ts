import type { RedisStore as Redis } from "../stores/redis-store";

/**
 * A script of `lua/`, with the SHA-1 of its source pinned (as upstash/ratelimit-js pins its scripts):
 * EVALSHA needs no hashing at run time, and a test fails when a source changes without its pin, so a
 * changed script is always a deliberate step.
 */
export type LuaScript = { readonly name: string; readonly source: string; readonly sha1: string };

/**
 * @example
 * export const releaseLockScript = defineScript("release-lock", releaseLockLua, "9c1f…");
 */
export function defineScript(name: string, source: string, sha1: string): LuaScript {
  return { name, source, sha1 };
}

/**
 * Runs a script by its pinned SHA-1 (EVALSHA), sending it in full (EVAL) when Redis answers NOSCRIPT (a
 * fresh or flushed server). Nothing is remembered between calls: Redis caches the script.
 */
export async function runScript<T = unknown>(
  redis: Redis,
  script: LuaScript,
  keys: string[],
  args: (string | number)[],
): Promise<T> {
  const argv = args.map(String);
  try {
    return (await redis.evalsha(script.sha1, keys, argv)) as T;
  } catch (error) {
    if (!(error instanceof Error) || !error.message.includes("NOSCRIPT")) throw error;
    return (await redis.eval(script.source, keys, argv)) as T;
  }
}
