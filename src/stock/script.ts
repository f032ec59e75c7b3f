import adjustStockLua from "../../lua/adjust-stock.lua";
import debitStockLua from "../../lua/debit-stock.lua";
import initSaleLua from "../../lua/init-sale.lua";
import rebuildSaleLua from "../../lua/rebuild-sale.lua";
import releaseLockLua from "../../lua/release-lock.lua";
import reserveStockLua from "../../lua/reserve-stock.lua";
import restoreStockLua from "../../lua/restore-stock.lua";
import setSalePausedLua from "../../lua/set-sale-paused.lua";
import voidReservationLua from "../../lua/void-reservation.lua";
import type { RedisStore as Redis } from "../stores/redis-store";

/** Raw script replies: arrays of integers and strings, decoded by each script's outcome module. */
export type ScriptReply = (string | number)[];

/** The Lua sources, by name. */
export const scriptSources = {
  reserveStock: reserveStockLua,
  restoreStock: restoreStockLua,
  adjustStock: adjustStockLua,
  initSale: initSaleLua,
  debitStock: debitStockLua,
  rebuildSale: rebuildSaleLua,
  releaseLock: releaseLockLua,
  setSalePaused: setSalePausedLua,
  voidReservation: voidReservationLua,
} as const;

export type ScriptName = keyof typeof scriptSources;

type Script = ReturnType<Redis["createScript"]>;
const cache = new WeakMap<Redis, Map<ScriptName, Script>>();

/**
 * Runs one of the scripts in `lua/` with EVALSHA, falling back to EVAL when Redis answers NOSCRIPT
 * (the `@upstash/redis` Script does both). Script objects (and their SHA-1) are kept per isolate.
 */
export function runScript<T = ScriptReply>(
  redis: Redis,
  name: ScriptName,
  keys: string[],
  args: (string | number)[],
): Promise<T> {
  let scripts = cache.get(redis);
  if (!scripts) {
    scripts = new Map();
    cache.set(redis, scripts);
  }
  let script = scripts.get(name);
  if (!script) {
    script = redis.createScript(scriptSources[name]);
    scripts.set(name, script);
  }
  return script.exec(keys, args.map(String)) as Promise<T>;
}
