import initSaleLua from "../../lua/init-sale.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const initSaleScript = defineScript(
  "init-sale",
  initSaleLua,
  "be50a93fd80a0c1dd35fda576f48169b1cec043e",
);

/**
 * Preheats a sale (meta fields, which include the initial `stock`, and for a drop of several variants
 * each one's units) once; false when it was already there (nothing changed: a retried create never
 * overwrites a sale that is selling).
 */
export async function initSale(
  redis: Redis,
  saleId: string,
  meta: Record<string, string>,
  variantStock?: Record<string, number>,
): Promise<boolean> {
  const k = saleKeys(saleId);
  const pairs = Object.entries(meta).flat();
  const reply = await withRedis(() =>
    variantStock
      ? runScript(
          redis,
          initSaleScript,
          [k.meta, k.stock, k.variantStock],
          [JSON.stringify(variantStock), ...pairs],
        )
      : runScript(redis, initSaleScript, [k.meta, k.stock], pairs),
  );
  return codeOf("init-sale", reply, ["OK", "ALREADY_EXISTS"] as const) === "OK";
}
