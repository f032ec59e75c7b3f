import type { Memory } from "../memory/memory";
import { saleKeys } from "../stock/keys";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { type VariantDefinition, variantDefinitionsOf } from "./sale-record";

/**
 * A sale's variants: from the process's memory (they never change), else one HMGET of the sale's meta,
 * remembered. A sale made before variants (no `variants` field) has one, `default`. A sale Redis does not
 * hold is answered unremembered with no variants: its buy then meets the script's answer for a missing
 * sale (503).
 */
export async function variantsOf(
  d: { redis: Redis; memory: Pick<Memory, "saleVariants"> },
  saleId: string,
): Promise<VariantDefinition[]> {
  const known = d.memory.saleVariants.get(saleId);
  if (known) return known;
  const reply = await withRedis(() => d.redis.hmget(saleKeys(saleId).meta, "variants", "name", "priceCents"));
  const [stored, name, price] = (reply ?? []) as (string | null)[];
  if (name === null || name === undefined) return [];
  const variants = variantDefinitionsOf(stored, name, price);
  d.memory.saleVariants.set(saleId, variants);
  return variants;
}
