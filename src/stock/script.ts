import type { RedisStore as Redis } from "../stores/redis-store";
import { traced } from "../tracing";
import { ScriptCode } from "./codes";

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
 * fresh or flushed server). Nothing is remembered between calls: Redis caches the script. With tracing
 * on, one span `EVALSHA <script>` with the reply's code by name (`flash_sale.script.code`).
 */
export function runScript<T = unknown>(
  redis: Redis,
  script: LuaScript,
  keys: string[],
  args: (string | number)[],
): Promise<T> {
  return traced(
    `EVALSHA ${script.name}`,
    { "db.system.name": "redis", "db.operation.name": "EVALSHA", "flash_sale.script": script.name },
    () => evalScript<T>(redis, script, keys, args),
    (reply) => ({ "flash_sale.script.code": codeName(reply) }),
  );
}

const NAMES = new Map<number, string>(Object.entries(ScriptCode).map(([name, code]) => [code, name]));

/** A reply's code by its name (the first element, or the bare reply), or "none". */
function codeName(reply: unknown): string {
  const code = Number(Array.isArray(reply) ? reply[0] : reply);
  return NAMES.get(code) ?? "none";
}

async function evalScript<T>(
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
