import type { Memory } from "../memory/memory";
import { catalogKeys, saleKeys } from "../stock/keys";
import { toRecord } from "../stores/redis-reply";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { fromMetaFields, type SaleRecord } from "./sale-record";

/** One sale from Redis (one pipeline: HGETALL meta + GET stock), or null if it is not there. */
export async function readSale(redis: Redis, saleId: string): Promise<SaleRecord | null> {
  const keys = saleKeys(saleId);
  const [meta, remaining] = await withRedis(() =>
    redis.pipeline().hgetall(keys.meta).get(keys.stock).exec<[unknown, string | null]>(),
  );
  return fromMetaFields(toRecord(meta), remaining);
}

/** Every registered sale (one SMEMBERS, then one pipeline for all of them). */
export async function readAllSales(redis: Redis): Promise<SaleRecord[]> {
  return withRedis(async () => {
    const ids = await redis.smembers(catalogKeys.sales);
    if (ids.length === 0) return [];
    const pipe = redis.pipeline();
    for (const id of ids) pipe.hgetall(saleKeys(id).meta).get(saleKeys(id).stock);
    const replies = await pipe.exec<unknown[]>();
    const sales: SaleRecord[] = [];
    for (let i = 0; i < ids.length; i++) {
      const sale = fromMetaFields(toRecord(replies[2 * i]), replies[2 * i + 1] as string | null);
      if (sale) sales.push(sale);
    }
    return sales.sort((a, b) => a.startsAt - b.startsAt);
  });
}

const LIST_CACHE_MS = 500;

/** Every registered sale, remembered by the process for half a second: every shopper page polls this. */
export async function readSaleList(
  d: { redis: Redis; memory: Pick<Memory, "saleList"> },
  now: number,
): Promise<SaleRecord[]> {
  const list = d.memory.saleList;
  if (list.cached && now - list.cached.at < LIST_CACHE_MS) return list.cached.sales;
  const sales = await readAllSales(d.redis);
  list.cached = { at: now, sales };
  return sales;
}

/** Forgets the process's sale list (after an operator change made here). */
export function forgetSaleList(memory: Pick<Memory, "saleList">): void {
  memory.saleList.cached = null;
}
