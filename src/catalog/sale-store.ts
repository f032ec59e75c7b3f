import type { Memory } from "../memory/memory";
import { catalogKeys, saleKeys } from "../stock/keys";
import { toRecord } from "../stores/redis-reply";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { fromMetaFields, type SaleRecord } from "./sale-record";

/**
 * One sale from Redis (one pipeline: HGETALL meta + GET stock + HGETALL of its variants' units), or
 * null if it is not there.
 */
export async function readSale(redis: Redis, saleId: string): Promise<SaleRecord | null> {
  const keys = saleKeys(saleId);
  const [meta, remaining, variantStock] = await withRedis(() =>
    redis
      .pipeline()
      .hgetall(keys.meta)
      .get(keys.stock)
      .hgetall(keys.variantStock)
      .exec<[unknown, string | null, unknown]>(),
  );
  return fromMetaFields(toRecord(meta), remaining, toRecord(variantStock));
}

/** Every registered sale (one SMEMBERS, then one pipeline for all of them). */
export async function readAllSales(redis: Redis): Promise<SaleRecord[]> {
  return withRedis(async () => {
    const ids = await redis.smembers(catalogKeys.sales);
    if (ids.length === 0) return [];
    const pipe = redis.pipeline();
    for (const id of ids) {
      const keys = saleKeys(id);
      pipe.hgetall(keys.meta).get(keys.stock).hgetall(keys.variantStock);
    }
    const replies = await pipe.exec<unknown[]>();
    const sales: SaleRecord[] = [];
    for (let i = 0; i < ids.length; i++) {
      const at = 3 * i;
      const sale = fromMetaFields(
        toRecord(replies[at]),
        replies[at + 1] as string | null,
        toRecord(replies[at + 2]),
      );
      if (sale) sales.push(sale);
    }
    return sales.sort((a, b) => a.startsAt - b.startsAt);
  });
}

const LIST_CACHE_MS = 500;
/** How old a list may still be answered while another request re-reads it. */
const LIST_STALE_MS = 5_000;
/** A re-read not finished within this long is given up (its request may be gone). */
const LIST_TAKEOVER_MS = 3_000;
const LIST_WAIT_STEP_MS = 10;

/**
 * Every registered sale, remembered by the process for half a second: every shopper page polls this.
 * When it is older, the first request re-reads it with its own I/O while the others answer from the
 * list in hand (up to 5 s old; they never await that read). With no list that recent, they wait for the
 * reader's list on their own timers (up to {@link LIST_TAKEOVER_MS}), so a crowd costs one read at a
 * time, also after a quiet spell.
 */
export async function readSaleList(
  d: { redis: Redis; memory: Pick<Memory, "saleList"> },
  at: number,
): Promise<SaleRecord[]> {
  const list = d.memory.saleList;
  let now = at;
  for (;;) {
    const cached = list.cached;
    if (cached && now - cached.at < LIST_CACHE_MS) return cached.sales;
    const since = list.refreshingSince;
    if (since === null || now - since >= LIST_TAKEOVER_MS || now - at >= LIST_TAKEOVER_MS) break;
    if (cached && now - cached.at < LIST_STALE_MS) return cached.sales;
    const theirs = await listReadBy(list, since);
    if (theirs) return theirs;
    now = Date.now(); // their read failed or was dropped: the first waiter to look reads again
  }
  list.refreshingSince = now;
  const generation = list.generation;
  try {
    const sales = await readAllSales(d.redis);
    // a read begun before an operator change here, or before a newer read, is not kept
    if (generation === list.generation && (!list.cached || list.cached.at <= now))
      list.cached = { at: now, sales };
    return sales;
  } finally {
    if (list.refreshingSince === now) list.refreshingSince = null;
  }
}

/**
 * The list stored by the read begun at `since`, looked for every {@link LIST_WAIT_STEP_MS} (a plain
 * value, never that request's promise: workerd forbids awaiting another request's I/O); null when that
 * read ended without one or ran past {@link LIST_TAKEOVER_MS}.
 */
async function listReadBy(list: Memory["saleList"], since: number): Promise<SaleRecord[] | null> {
  for (;;) {
    await new Promise((r) => setTimeout(r, LIST_WAIT_STEP_MS));
    const cached = list.cached;
    if (cached && cached.at >= since) return cached.sales;
    if (list.refreshingSince !== since || Date.now() - since >= LIST_TAKEOVER_MS) return null;
  }
}

/** Forgets the process's sale list (after an operator change made here). */
export function forgetSaleList(memory: Pick<Memory, "saleList">): void {
  memory.saleList.cached = null;
  memory.saleList.refreshingSince = null;
  memory.saleList.generation++;
}
