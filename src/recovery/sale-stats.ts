import type { StatsDeps } from "../services";
import { saleKeys } from "../stock/keys";
import { ledgerField } from "../stock/ledger-entry";
import { parseQueuedOrder, type QueuedOrder } from "../stock/queued-order";
import { toRecord } from "../stores/redis-reply";
import { withRedis } from "../stores/with-redis";
import { HOLDINGS_PER_READING, holdingScanOf, takeHoldingChunk } from "./holding-scan";
import { readCounters, readUnrestored, type VariantCounterRow } from "./stats-reads";
import { type VariantStats, variantStats } from "./variant-stats";

export type SaleStats = {
  stock: number;
  remaining: number;
  queued: number;
  awaitingPayment: number;
  paid: number;
  expired: number;
  cancelled: number;
  ordersInDb: number;
  ledgerEntries: number;
  /** units in queued + awaiting_payment + paid orders */
  liveUnits: number;
  /** units of expired/cancelled orders not yet back in Redis */
  pendingRestoreUnits: number;
  /** users holding more than the per-user limit in Postgres or in Redis (late writes after a Redis loss) */
  usersOverLimit: number;
  invariantHolds: boolean;
  /** what breaks the invariant, in words for the operator (empty while it holds) */
  invariantBreaks: string[];
  /** each variant's figures, in the operator's order (a sale of one: its one variant, the sale's figures) */
  variants: VariantStats[];
};

type RedisSide = {
  stock: number;
  remaining: number;
  perUserLimit: number;
  ledgerEntries: number;
  /** the orders still queued (not yet acknowledged by an order write): the pipeline's backlog */
  queued: QueuedOrder[];
  overLimit: string[];
  /** of the orders Postgres had not marked restored, those whose units this reading has back ("x:" entry) */
  givenBack: string[];
  /** a drop of several variants (it keeps `vstock` and `vholdings`) */
  tracked: boolean;
  /** a drop of several variants: each one's units remaining (`vstock`) */
  variantStock: Record<string, string> | null;
  /** "<variantId>:<userId>" over the variant's own cap in the holdings per variant (one chunk of the walk) */
  overCap: string[];
};

/**
 * Redis figures read atomically (MULTI), each at a cost that does not grow with the sale: stock,
 * remaining, the ledger's length (HLEN), the queued orders (the order pipeline's backlog, not the
 * sale's orders) and one chunk of the holdings.
 */
async function readRedisSide(deps: StatsDeps, saleId: string, unrestored: string[]): Promise<RedisSide> {
  const keys = saleKeys(saleId);
  const scan = holdingScanOf(deps.memory, saleId);
  const variantScan = holdingScanOf(deps.memory, saleId, "variants");
  const restoreFields = unrestored.map((id) => ledgerField("restore", id));
  const multi = deps.redis
    .multi()
    .hget(keys.meta, "stock")
    .hget(keys.meta, "perUserLimit")
    .get(keys.stock)
    .hlen(keys.ledger)
    .hgetall(keys.orders)
    .hscan(keys.holdings, scan.cursor, { count: HOLDINGS_PER_READING })
    .hget(keys.meta, "variants")
    .hgetall(keys.variantStock)
    .hscan(keys.variantHoldings, variantScan.cursor, { count: HOLDINGS_PER_READING });
  type Chunk = [string | number, (string | number)[]];
  // biome-ignore format: one line per reply
  type Replies = [string | null, string | null, string | null, number, unknown, Chunk, string | null, unknown, Chunk, unknown];
  const [
    stock,
    limit,
    remaining,
    ledgerEntries,
    orders,
    holdings,
    variants,
    variantStock,
    variantHoldings,
    restores,
  ] = await withRedis(() =>
    (restoreFields.length > 0 ? multi.hmget(keys.ledger, ...restoreFields) : multi).exec<Replies>(),
  );
  const given = Array.isArray(restores) ? restores : [];
  const givenBack = unrestored.filter((_, i) => given[i] !== null && given[i] !== undefined);
  const queued = Object.values(toRecord(orders) ?? {})
    .map((json) => parseQueuedOrder(saleId, json))
    .filter((o): o is QueuedOrder => o !== null);
  const perUserLimit = limit === null ? Number.POSITIVE_INFINITY : Number(limit);
  const defined = definedVariants(variants);
  return {
    stock: Number(stock ?? 0),
    remaining: Number(remaining ?? 0),
    perUserLimit,
    ledgerEntries: Number(ledgerEntries),
    queued,
    overLimit: takeHoldingChunk(scan, holdings, perUserLimit),
    givenBack,
    tracked: defined.length > 1,
    variantStock: toRecord(variantStock),
    overCap: takeHoldingChunk(variantScan, variantHoldings, capsOf(defined)),
  };
}

/** The variants the meta hash defines (`variants`; none for a sale made before them). */
function definedVariants(variants: string | null): { variantId?: unknown; perUserLimit?: unknown }[] {
  try {
    const parsed: unknown = variants ? JSON.parse(variants) : [];
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

/** Each variant's own cap, as the limit of a "<variantId>:<userId>" field of the holdings per variant. */
function capsOf(defined: { variantId?: unknown; perUserLimit?: unknown }[]): (field: string) => number {
  const caps = new Map<string, number>();
  for (const v of defined)
    if (typeof v.perUserLimit === "number") caps.set(String(v.variantId), v.perUserLimit);
  return (field) => caps.get(field.slice(0, field.indexOf(":"))) ?? Number.POSITIVE_INFINITY;
}

/**
 * The operator's figures and the contract's invariant: stock (initial + adjustments) = remaining +
 * units in live orders (+ units of finished orders whose restore is still in flight), remaining not
 * below zero, and no user over the limit in either store (Postgres accepts every acknowledged order, so
 * a late write after a Redis loss can take a user over it: that is reported here). Redis is read first:
 * an order leaves Redis's queue only after its Postgres row exists, so nothing falls between the two
 * reads, and a queued order Postgres already has is counted once. Every figure is a counter or the
 * pipeline's backlog, so a reading costs the same at 10,000 orders as at a million; the
 * reconciliation checks the counters against a recount. A restore in flight (Redis gave the units back,
 * Postgres has not recorded it) is settled exactly: the restore backlog's ids are read first, the Redis
 * reading says which of them it has back, and the last read counts each by that. A reading taken while
 * an order moves in a way these reads do not pin (reserved after the Redis read and written before the
 * Postgres one; expired and restored between the reads) can disagree for a moment: {@link saleStats}
 * reads again.
 */
async function readSaleStats(deps: StatsDeps, saleId: string): Promise<SaleStats> {
  const unrestored = await readUnrestored(deps, saleId);
  const r = await readRedisSide(deps, saleId, unrestored);
  const queuedIds = r.queued.map((o) => o.orderId);
  const row = await readCounters(deps, saleId, { queuedIds, givenBack: r.givenBack, unrestored });
  const n = (v: number | null) => Number(v ?? 0);
  const queuedUnits = r.queued.reduce((sum, o) => sum + o.quantity, 0);
  const liveUnits = queuedUnits + n(row.live_units) - n(row.queued_live);
  const pendingRestoreUnits =
    n(row.unrestored_units) - n(row.queued_unrestored) - n(row.given_back) + n(row.marked_since);
  const overInPostgres = parseUserIds(row.over_limit);
  const usersOverLimit = new Set([...overInPostgres, ...r.overLimit]).size;
  const breaks: string[] = [];
  if (r.remaining < 0) breaks.push(`remaining is ${r.remaining}: units were sold twice`);
  if (usersOverLimit > 0)
    breaks.push(
      `${usersOverLimit} user(s) over the limit of ${r.perUserLimit} (Postgres ${overInPostgres.length}, Redis ${r.overLimit.length})`,
    );
  if (r.stock !== r.remaining + liveUnits + pendingRestoreUnits)
    breaks.push(
      `stock ${r.stock} ≠ remaining ${r.remaining} + live ${liveUnits} + restoring ${pendingRestoreUnits}`,
    );
  const perVariant = variantStats({
    tracked: r.tracked,
    rows: parseJson<VariantCounterRow[]>(row.variants, []),
    redis: r,
    overCapInRedis: r.overCap,
    overCapInPostgres: parseJson<{ variantId: string; userId: string }[]>(row.variant_over_limit, []),
    sale: { liveUnits, pendingRestoreUnits },
  });
  breaks.push(...perVariant.breaks);
  return {
    stock: r.stock,
    remaining: r.remaining,
    // an order written but not yet acknowledged is counted once: by its status in Postgres
    queued: r.queued.length - n(row.queued_written),
    awaitingPayment: n(row.awaiting_payment),
    paid: n(row.paid),
    expired: n(row.expired),
    cancelled: n(row.cancelled),
    ordersInDb: n(row.orders),
    ledgerEntries: r.ledgerEntries,
    liveUnits,
    pendingRestoreUnits,
    usersOverLimit,
    invariantHolds: breaks.length === 0,
    invariantBreaks: breaks,
    variants: perVariant.variants,
  };
}

/** A JSON value as the driver returns it (parsed already, or as text); `fallback` when it is neither. */
function parseJson<T>(value: unknown, fallback: T): T {
  const parsed = typeof value === "string" ? (JSON.parse(value) as unknown) : value;
  return parsed === null || parsed === undefined ? fallback : (parsed as T);
}

/** A JSON array of user ids as the driver returns it (parsed already, or as text). */
function parseUserIds(value: unknown): string[] {
  const parsed = typeof value === "string" ? (JSON.parse(value) as unknown) : value;
  return Array.isArray(parsed) ? parsed.map(String) : [];
}

/**
 * {@link readSaleStats}, re-read a few times when it does not add up: a restore in flight is briefly
 * visible in Redis before Postgres records it, so one reading can disagree while nothing is wrong.
 */
export async function saleStats(deps: StatsDeps, saleId: string): Promise<SaleStats> {
  let stats = await readSaleStats(deps, saleId);
  for (let attempt = 0; attempt < 3 && !stats.invariantHolds; attempt++) {
    await new Promise((r) => setTimeout(r, 100));
    stats = await readSaleStats(deps, saleId);
  }
  return stats;
}
