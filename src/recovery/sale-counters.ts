import { sql } from "drizzle-orm";
import { type Db, withDb } from "../db/client";

/** The counters `sale_counters` keeps per sale (see the table in src/db/schema.ts). */
export const COUNTER_FIELDS = [
  "orders",
  "awaiting_payment",
  "paid",
  "expired",
  "cancelled",
  "live_units",
  "unrestored_units",
] as const;

/** One counter that did not match its recount: what it said, what the orders say (it now says that). */
export type CounterRepair = { counter: (typeof COUNTER_FIELDS)[number]; was: number; recounted: number };

const recount = (saleId: string) => sql`
  select count(*)::int as orders,
    count(*) filter (where status = 'awaiting_payment')::int as awaiting_payment,
    count(*) filter (where status = 'paid')::int as paid,
    count(*) filter (where status = 'expired')::int as expired,
    count(*) filter (where status = 'cancelled')::int as cancelled,
    coalesce(sum(quantity) filter (where status in ('awaiting_payment', 'paid')), 0)::int as live_units,
    coalesce(sum(quantity) filter (where status in ('expired', 'cancelled') and restored_at is null), 0)::int
      as unrestored_units
  from orders where sale_id = ${saleId}`;

/** How many rows a sale's counters are spread over (the triggers add to `pg_backend_pid() % 8`). */
const SHARDS = 8;

const sums = sql.raw(COUNTER_FIELDS.map((f) => `coalesce(sum(${f}), 0)::int as ${f}`).join(", "));

/**
 * A sale's counters as kept: the sum of its shards (zeros for a sale with no order yet).
 *
 * @example
 * sql`select c.paid from (${countersOf(saleId)}) c`
 */
export function countersOf(saleId: string) {
  return sql`select ${sums} from sale_counters where sale_id = ${saleId}`;
}

/**
 * Recounts a sale's counters from its orders and repairs those that drifted, exactly even while orders
 * are written and paid: in one transaction every shard row of the sale is made to exist and locked first
 * (every statement that moves a counter then waits for it at its end, its own order rows already changed
 * and not yet visible; no writer can add a shard row the lock missed), then the recount reads with a
 * snapshot taken after that lock and goes into shard 0, the others set to zero, so an order change is
 * either in the recount or applied afterwards on top of it, never both or neither. Reads every order of
 * the sale: the reconciliation runs it once per pass of its walk through the ledger, or when asked for a
 * full run.
 */
export async function recountCounters(db: Db, saleId: string): Promise<CounterRepair[]> {
  const zeros = sql.raw(COUNTER_FIELDS.map((f) => `${f} = 0`).join(", "));
  const fromRecount = sql.raw(COUNTER_FIELDS.map((f) => `${f} = r.${f}`).join(", "));
  const [, locked, , recounted] = await withDb(() =>
    db.transaction([
      sql`insert into sale_counters (sale_id, shard)
          select ${saleId}, s from generate_series(0, ${SHARDS - 1}) s on conflict do nothing`,
      sql`with l as (select * from sale_counters where sale_id = ${saleId} order by shard for update)
          select ${sums} from l`,
      sql`update sale_counters set ${zeros} where sale_id = ${saleId} and shard <> 0`,
      sql`with r as (${recount(saleId)})
          update sale_counters c set ${fromRecount}
          from r where c.sale_id = ${saleId} and c.shard = 0
          returning c.*`,
    ]),
  );
  const before = (locked?.[0] ?? {}) as Record<string, unknown>;
  const after = (recounted?.[0] ?? {}) as Record<string, unknown>;
  return COUNTER_FIELDS.flatMap((counter) => {
    const was = Number(before[counter] ?? 0);
    const now = Number(after[counter] ?? 0);
    return was === now ? [] : [{ counter, was, recounted: now }];
  });
}
