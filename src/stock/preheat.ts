import initSaleLua from "../../lua/init-sale.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const initSaleScript = defineScript(
  "init-sale",
  initSaleLua,
  "18a0c945aa5e588be22236e03b44e967b437049c",
);

/**
 * Preheats a sale (meta fields, which include the initial `stock`) once; false when it was already
 * there (nothing changed: a retried create never overwrites a sale that is selling).
 */
export async function initSale(redis: Redis, saleId: string, meta: Record<string, string>): Promise<boolean> {
  const k = saleKeys(saleId);
  const reply = await withRedis(() =>
    runScript(redis, initSaleScript, [k.meta, k.stock], Object.entries(meta).flat()),
  );
  return codeOf("init-sale", reply, ["OK", "ALREADY_EXISTS"] as const) === "OK";
}
