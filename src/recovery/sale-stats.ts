import { sql } from "drizzle-orm";
import { withDb } from "../db/client";
import type { Deps } from "../services";
import { saleKeys } from "../stock/keys";
import { parseLedgerField } from "../stock/ledger-entry";
import { parseQueuedOrder, type QueuedOrder } from "../stock/queued-order";
import { toRecord } from "../stores/redis-reply";
import { withRedis } from "../stores/with-redis";

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
  ledgerEntries: number;
  queued: QueuedOrder[];
  holdings: Record<string, number>;
  /** orders this Redis counts: a reservation entry and no restore entry (queued ones included) */
  counted: string[];
};

/**
 * Redis figures read atomically (MULTI): a reservation changes stock and the queued set together, and a
 * restore changes stock and writes its "x:" entry together, so the ledger's field names say which
 * orders this very reading of `remaining` still counts.
 */
async function readRedisSide(redis: Deps["redis"], saleId: string): Promise<RedisSide> {
  const keys = saleKeys(saleId);
  const [stock, remaining, fields, orders, holdings] = await withRedis(() =>
    redis
      .multi()
      .hget(keys.meta, "stock")
      .get(keys.stock)
      .hkeys(keys.ledger)
      .hgetall(keys.orders)
      .hgetall(keys.holdings)
      .exec<[string | null, string | null, string[], unknown, unknown]>(),
  );
  const kinds = fields.map(parseLedgerField);
  const restored = new Set(kinds.flatMap((k) => (k?.type === "restore" ? [k.id] : [])));
  const counted = kinds.flatMap((k) => (k?.type === "reserve" && !restored.has(k.id) ? [k.id] : []));
  const queued = Object.values(toRecord(orders) ?? {})
    .map((json) => parseQueuedOrder(saleId, json))
    .filter((o): o is QueuedOrder => o !== null);
  const held = Object.fromEntries(
    Object.entries(toRecord(holdings) ?? {}).map(([userId, units]) => [userId, Number(units)]),
  );
  return {
    stock: Number(stock ?? 0),
    remaining: Number(remaining ?? 0),
    ledgerEntries: fields.length,
    queued,
    holdings: held,
    counted,
  };
}

/**
 * Longer than a stats reading takes from its Redis read to its Postgres read: an order written that
 * recently and unknown to the Redis reading was reserved (or counted by a late write) after it.
 */
const READ_GAP_SECONDS = 10;

/**
 * The operator's figures and the contract's invariant: stock (initial + adjustments) = remaining +
 * units in live orders (+ units of finished orders whose restore is still in flight), remaining not
 * below zero, and no user over the limit in either store (Postgres accepts every acknowledged order, so
 * a late write after a Redis loss can take a user over it: that is reported here). Redis is read first:
 * an order leaves Redis only after its Postgres row exists, so nothing falls between the two reads, and
 * an order seen in both is counted once. A finished order's restore is "in flight" when the Redis
 * reading still counts it (reservation entry, no restore entry), whatever Postgres says of it by the
 * time it is read: Postgres marks it restored only after Redis gave it back, and either may happen
 * between the two reads. Likewise an unpaid order the Redis reading does not know and Postgres wrote
 * in the last seconds was reserved after that reading (its units are not out of that `remaining`);
 * older ones (a Redis that lost them) are counted, and paid ones always (their ledger entries are
 * trimmed once finished; no order is reserved, written and paid between two reads a moment apart).
 */
async function readSaleStats(deps: Pick<Deps, "redis" | "db">, saleId: string): Promise<SaleStats> {
  const r = await readRedisSide(deps.redis, saleId);
  const queuedIds = r.queued.map((o) => o.orderId);
  // one JSON parameter, not one per queued order: a rush can queue more than Postgres's 65,535 parameters
  const exclude = sql`and id not in (select jsonb_array_elements_text(${JSON.stringify(queuedIds)}::jsonb))`;
  const result = await withDb(() =>
    deps.db.execute<Record<string, unknown>>(sql`
      with counted as (select jsonb_array_elements_text(${JSON.stringify(r.counted)}::jsonb) as id)
      select
        count(*) filter (where status = 'awaiting_payment')::int as awaiting,
        count(*) filter (where status = 'paid')::int as paid,
        count(*) filter (where status = 'expired')::int as expired,
        count(*) filter (where status = 'cancelled')::int as cancelled,
        count(*)::int as total,
        coalesce(sum(quantity) filter (where status in ('awaiting_payment', 'paid') ${exclude}
          and (status = 'paid' or id in (select id from counted)
            or written_at < now() - make_interval(secs => ${READ_GAP_SECONDS}))), 0)::int as live_units,
        coalesce(sum(quantity) filter (where status in ('expired', 'cancelled') ${exclude}
          and id in (select id from counted)), 0)::int as pending_units,
        (select per_user_limit from sales where id = ${saleId}) as per_user_limit,
        (select coalesce(json_agg(h.user_id), '[]'::json) from holdings h join sales s on s.id = h.sale_id
          where h.sale_id = ${saleId} and h.units > s.per_user_limit) as over_limit
      from orders where sale_id = ${saleId}`),
  );
  const row = result.rows[0] ?? {};
  const queuedUnits = r.queued.reduce((sum, o) => sum + o.quantity, 0);
  const liveUnits = queuedUnits + Number(row.live_units ?? 0);
  const pendingRestoreUnits = Number(row.pending_units ?? 0);
  const limit = Number(row.per_user_limit ?? Number.POSITIVE_INFINITY);
  const overInPostgres = parseUserIds(row.over_limit);
  const overInRedis = Object.keys(r.holdings).filter((userId) => (r.holdings[userId] ?? 0) > limit);
  const usersOverLimit = new Set([...overInPostgres, ...overInRedis]).size;
  const breaks: string[] = [];
  if (r.remaining < 0) breaks.push(`remaining is ${r.remaining}: units were sold twice`);
  if (usersOverLimit > 0)
    breaks.push(
      `${usersOverLimit} user(s) over the limit of ${limit} (Postgres ${overInPostgres.length}, Redis ${overInRedis.length})`,
    );
  if (r.stock !== r.remaining + liveUnits + pendingRestoreUnits)
    breaks.push(
      `stock ${r.stock} ≠ remaining ${r.remaining} + live ${liveUnits} + restoring ${pendingRestoreUnits}`,
    );
  return {
    stock: r.stock,
    remaining: r.remaining,
    queued: r.queued.length,
    awaitingPayment: Number(row.awaiting ?? 0),
    paid: Number(row.paid ?? 0),
    expired: Number(row.expired ?? 0),
    cancelled: Number(row.cancelled ?? 0),
    ordersInDb: Number(row.total ?? 0),
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
export async function saleStats(deps: Pick<Deps, "redis" | "db">, saleId: string): Promise<SaleStats> {
  let stats = await readSaleStats(deps, saleId);
  for (let attempt = 0; attempt < 3 && !stats.invariantHolds; attempt++) {
    await new Promise((r) => setTimeout(r, 100));
    stats = await readSaleStats(deps, saleId);
  }
  return stats;
}
