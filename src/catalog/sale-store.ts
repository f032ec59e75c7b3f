import type { Memory } from "../memory/memory";
import { catalogKeys, saleKeys } from "../stock/keys";
import { toRecord } from "../stores/redis-reply";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { CatalogMissingError } from "./catalog";
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

/**
 * Every registered sale (one SMEMBERS, then one pipeline for all of them), and the ids the catalog
 * lists that Redis holds no sale for: lost with the store that held them (a Cluster master restarted
 * empty, while the catalog lives on another), until a recovery rebuilds them. A sale is added to the
 * catalog only after its keys are written (src/sales/create-sale.ts), so a listed id without them is lost.
 * `catalogMissing`: the catalog's version is gone (the catalog lost with its store; or none made yet).
 */
export async function readListedSales(
  redis: Redis,
): Promise<{ sales: SaleRecord[]; lost: string[]; catalogMissing: boolean }> {
  return withRedis(async () => {
    const [ids, version] = await redis
      .pipeline()
      .smembers(catalogKeys.sales)
      .get<string>(catalogKeys.version)
      .exec<[string[], string | null]>();
    const catalogMissing = version === null;
    if (ids.length === 0) return { sales: [], lost: [], catalogMissing };
    const pipe = redis.pipeline();
    for (const id of ids) {
      const keys = saleKeys(id);
      pipe.hgetall(keys.meta).get(keys.stock).hgetall(keys.variantStock);
    }
    const replies = await pipe.exec<unknown[]>();
    const sales: SaleRecord[] = [];
    const lost: string[] = [];
    for (let i = 0; i < ids.length; i++) {
      const at = 3 * i;
      const sale = fromMetaFields(
        toRecord(replies[at]),
        replies[at + 1] as string | null,
        toRecord(replies[at + 2]),
      );
      if (sale) sales.push(sale);
      else lost.push(ids[i] as string);
    }
    return { sales: sales.sort((a, b) => a.startsAt - b.startsAt), lost, catalogMissing };
  });
}

/** Every registered sale Redis holds (one SMEMBERS, then one pipeline for all of them). */
export async function readAllSales(redis: Redis): Promise<SaleRecord[]> {
  return (await readListedSales(redis)).sales;
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
  // `at` is the store's clock; the time waited is counted on this process's, added to it
  const startedAt = Date.now();
  const clock = () => at + (Date.now() - startedAt);
  let now = at;
  for (;;) {
    const cached = list.cached;
    if (cached && now - cached.at < LIST_CACHE_MS) return cached.sales;
    const since = list.refreshingSince;
    if (since === null || now - since >= LIST_TAKEOVER_MS || now - at >= LIST_TAKEOVER_MS) break;
    if (cached && now - cached.at < LIST_STALE_MS) return cached.sales;
    const theirs = await listReadBy(list, since, clock);
    if (theirs) return theirs;
    now = clock(); // their read failed or was dropped: the first waiter to look reads again
  }
  list.refreshingSince = now;
  const generation = list.generation;
  try {
    const read = await readListedSales(d.redis);
    // a catalog lost with its store lists nothing: every sale this process knew is lost until rebuilt
    const known = list.cached?.sales ?? [];
    if (read.catalogMissing)
      for (const s of known)
        if (!read.sales.some((r) => r.saleId === s.saleId) && !read.lost.includes(s.saleId))
          read.lost.push(s.saleId);
    // a lost sale (being rebuilt) stays listed as this process last read it, if it did
    const carried = read.lost.flatMap((id) => known.find((s) => s.saleId === id) ?? []);
    // no catalog and nothing known to show: an empty list would be a guess (a new shop's catalog is
    // made, a lost one registered again, by the recovery this starts)
    if (read.catalogMissing && read.sales.length === 0 && carried.length === 0)
      throw new CatalogMissingError();
    const sales =
      carried.length === 0 ? read.sales : [...read.sales, ...carried].sort((a, b) => a.startsAt - b.startsAt);
    // a read begun before an operator change here, or before a newer read, is not kept
    if (generation === list.generation && (!list.cached || list.cached.at <= now))
      list.cached = { at: now, sales, lost: read.lost, catalogMissing: read.catalogMissing };
    return sales;
  } finally {
    if (list.refreshingSince === now) list.refreshingSince = null;
  }
}

/**
 * The list stored by the read begun at `since`, looked for every {@link LIST_WAIT_STEP_MS} (a plain
 * value, never that request's promise: workerd forbids awaiting another request's I/O); null when that
 * read ended without one or ran past {@link LIST_TAKEOVER_MS} (by `clock`, the store's time as the
 * waiter counts it).
 */
async function listReadBy(
  list: Memory["saleList"],
  since: number,
  clock: () => number,
): Promise<SaleRecord[] | null> {
  for (;;) {
    await new Promise((r) => setTimeout(r, LIST_WAIT_STEP_MS));
    const cached = list.cached;
    if (cached && cached.at >= since) return cached.sales;
    if (list.refreshingSince !== since || clock() - since >= LIST_TAKEOVER_MS) return null;
  }
}

/** How long a sale found lost by its own read is answered as lost (its rebuild takes seconds). */
const LOST_SEEN_MS = 10_000;

/**
 * Whether `saleId` is listed in the catalog but not in Redis, or the catalog itself is lost (a sale
 * being rebuilt, which a read answers 503, not 404): as the process's last read of the sale list found
 * it, or a read of its own within
 * {@link LOST_SEEN_MS} ({@link noticeIfLost}).
 */
export function isLostSale(memory: Pick<Memory, "saleList">, saleId: string, now = Date.now()): boolean {
  const cached = memory.saleList.cached;
  // with the catalog lost, an id it does not list may be a sale it will list again once rebuilt
  if (cached?.catalogMissing || cached?.lost.includes(saleId)) return true;
  const seen = memory.saleList.lostSeen.get(saleId);
  return seen !== undefined && now - seen < LOST_SEEN_MS;
}

/**
 * After a read found no sale `saleId`: one pipeline (SISMEMBER, the catalog's version) tells a lost sale
 * (listed in the catalog, or the catalog itself lost) from an unknown one, remembered for
 * {@link isLostSale} (the latest few hundred ids).
 */
export async function noticeIfLost(
  d: { redis: Redis; memory: Pick<Memory, "saleList"> },
  saleId: string,
): Promise<void> {
  const [listed, version] = await withRedis(() =>
    d.redis
      .pipeline()
      .sismember(catalogKeys.sales, saleId)
      .get<string>(catalogKeys.version)
      .exec<[number, string | null]>(),
  );
  if (!listed && version !== null) return;
  d.memory.saleList.lostSeen.set(saleId, Date.now());
}

/** Whether the process's last read of the sale list found sales lost with their store. */
export function hasLostSales(memory: Pick<Memory, "saleList">): boolean {
  return (memory.saleList.cached?.lost.length ?? 0) > 0;
}

/** Forgets the process's sale list (after an operator change made here). */
export function forgetSaleList(memory: Pick<Memory, "saleList">): void {
  memory.saleList.cached = null;
  memory.saleList.refreshingSince = null;
  memory.saleList.generation++;
}
