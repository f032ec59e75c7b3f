import { fromMetaFields, type SaleRecord } from "../catalog/sale-record";
import { saleKeys } from "../stock/keys";
import { toRecord } from "../stores/redis-reply";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";

/**
 * A sale as Redis held it at one instant, for a webhook event to describe: the sale, the store's time
 * then, and where the read stands among every other such read of the sale (`epoch`, then `stamp`:
 * a later read has a higher pair, so it saw every change an earlier one saw).
 */
export type SaleSnapshot = { sale: SaleRecord; at: number; epoch: number; stamp: number };

/**
 * Reads a sale for an event in one MULTI (HGETALL meta, GET stock, INCR of its read counter, TIME), so
 * the state, the store's clock and the read's stamp are one instant's. Null when Redis does not hold
 * the sale. The stamp orders reads; the epoch (a rebuild's) ranks a rebuilt Redis's reads above the old.
 *
 * @example
 * const snapshot = await readSaleSnapshot(redis, saleId); // { sale, at, epoch: 1, stamp: 7 }
 */
export async function readSaleSnapshot(redis: Redis, saleId: string): Promise<SaleSnapshot | null> {
  const keys = saleKeys(saleId);
  const [meta, remaining, stamp, time, variantStock] = await withRedis(() =>
    redis
      .multi()
      .hgetall(keys.meta)
      .get(keys.stock)
      .incr(keys.eventReads)
      .time()
      .hgetall(keys.variantStock)
      .exec<[unknown, string | null, number | string, [number | string, number | string], unknown]>(),
  );
  const fields = toRecord(meta);
  const sale = fromMetaFields(fields, remaining, toRecord(variantStock));
  if (!sale) return null;
  const at = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
  return { sale, at, epoch: Number(fields?.epoch ?? 1), stamp: Number(stamp) };
}
