import { catalogKeys, saleKeys } from "../stock/keys";
import { runScript } from "../stock/script";
import { toRecord } from "../stores/redis-reply";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { fromMetaFields, type SaleRecord, toMetaFields } from "./sale-record";

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

/** Preheats a sale (meta + stock) once; returns false when it was already there (nothing changed). */
export async function preheatSale(redis: Redis, sale: Omit<SaleRecord, "remaining">): Promise<boolean> {
  const keys = saleKeys(sale.saleId);
  const fields = Object.entries(toMetaFields(sale)).flat();
  const created = await withRedis(() =>
    runScript<number>(redis, "initSale", [keys.meta, keys.stock], fields),
  );
  return created === 1;
}

/**
 * Sets or clears the pause flag the reservation script reads (set-sale-paused.lua). A sale that is not
 * in Redis is left alone (returns false): the flag alone would make a partial sale; the rebuild takes
 * the flag from Postgres.
 */
export async function setSalePaused(redis: Redis, saleId: string, paused: boolean): Promise<boolean> {
  const set = await withRedis(() =>
    runScript<number>(redis, "setSalePaused", [saleKeys(saleId).meta], [paused ? "1" : "0"]),
  );
  return Number(set) === 1;
}
