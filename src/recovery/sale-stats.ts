import type { StatsDeps } from "../services";
import { saleKeys } from "../stock/keys";
import { ledgerField } from "../stock/ledger-entry";
import { parseQueuedOrder, type QueuedOrder } from "../stock/queued-order";
import { toRecord } from "../stores/redis-reply";
import { withRedis } from "../stores/with-redis";
import { HOLDINGS_PER_READING, holdingScanOf, takeHoldingChunk } from "./holding-scan";
import { readCounters, readUnrestored } from "./stats-reads";

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
};

/**
 * Redis figures read atomically (MULTI), each at a cost that does not grow with the sale: stock,
 * remaining, the ledger's length (HLEN), the queued orders (the order pipeline's backlog, not the
 * sale's orders) and one chunk of the holdings.
 */
async function readRedisSide(deps: StatsDeps, saleId: string, unrestored: string[]): Promise<RedisSide> {
  const keys = saleKeys(saleId);
  const scan = holdingScanOf(deps.memory, saleId);
  const restoreFields = unrestored.map((id) => ledgerField("restore", id));
  const multi = deps.redis
    .multi()
    .hget(keys.meta, "stock")
    .hget(keys.meta, "perUserLimit")
    .get(keys.stock)
    .hlen(keys.ledger)
    .hgetall(keys.orders)
    .hscan(keys.holdings, scan.cursor, { count: HOLDINGS_PER_READING });
  // biome-ignore format: one line per reply
  type Replies = [string | null, string | null, string | null, number, unknown, [string | number, (string | number)[]], unknown];
  const [stock, limit, remaining, ledgerEntries, orders, holdings, restores] = await withRedis(() =>
    (restoreFields.length > 0 ? multi.hmget(keys.ledger, ...restoreFields) : multi).exec<Replies>(),
  );
  const given = Array.isArray(restores) ? restores : [];
  const givenBack = unrestored.filter((_, i) => given[i] !== null && given[i] !== undefined);
  const queued = Object.values(toRecord(orders) ?? {})
    .map((json) => parseQueuedOrder(saleId, json))
    .filter((o): o is QueuedOrder => o !== null);
  const perUserLimit = limit === null ? Number.POSITIVE_INFINITY : Number(limit);
  return {
    stock: Number(stock ?? 0),
    remaining: Number(remaining ?? 0),
    perUserLimit,
    ledgerEntries: Number(ledgerEntries),
    queued,
    overLimit: takeHoldingChunk(scan, holdings, perUserLimit),
    givenBack,
  };
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
  return {
    stock: r.stock,
    remaining: r.remaining,
    queued: r.queued.length,
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
  };
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
