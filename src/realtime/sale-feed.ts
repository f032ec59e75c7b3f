import { fromMetaFields, type SaleRecord, type SaleView, toSaleView } from "../catalog/sale-record";
import { type Frame, frameOf } from "../memory/frame";
import { saleKeys } from "../stock/keys";
import { toRecord } from "../stores/redis-reply";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";

/** The given sales as Redis holds them (one pipeline); absent sales are left out. */
export async function readSales(redis: Redis, saleIds: string[]): Promise<Map<string, SaleRecord>> {
  const pipe = redis.pipeline();
  for (const id of saleIds) {
    const keys = saleKeys(id);
    pipe.hgetall(keys.meta).get(keys.stock).hgetall(keys.variantStock);
  }
  const replies = await withRedis(() => pipe.exec<unknown[]>());
  const sales = new Map<string, SaleRecord>();
  saleIds.forEach((id, i) => {
    const at = 3 * i;
    const sale = fromMetaFields(
      toRecord(replies[at]),
      replies[at + 1] as string | null,
      toRecord(replies[at + 2]),
    );
    if (sale) sales.set(id, sale);
  });
  return sales;
}

/** What a sale event carries: the shopper `Sale`, exactly as `GET /api/sales/:saleId` renders it. */
export function saleEvent(sale: SaleRecord, now: number): SaleView {
  return toSaleView(sale, now, "shopper");
}

/** What makes two sale events the same (everything but the clock reading). */
export function saleEventKey(view: SaleView): string {
  return JSON.stringify({ ...view, serverTime: "" });
}

/** A sale's `sale` event at `now`, serialized. */
export function saleFrame(sale: SaleRecord, now: number): Frame {
  const view = saleEvent(sale, now);
  return frameOf([{ event: "sale", data: JSON.stringify(view), key: saleEventKey(view) }]);
}

/** The given sales' frames at the store's `now` (one pipeline, then the clock); absent sales are left out. */
export async function readSaleFrames(
  redis: Redis,
  saleIds: string[],
  now: () => Promise<number>,
): Promise<Map<string, Frame>> {
  const sales = await readSales(redis, saleIds);
  const at = await now();
  return new Map([...sales].map(([id, sale]) => [id, saleFrame(sale, at)]));
}
