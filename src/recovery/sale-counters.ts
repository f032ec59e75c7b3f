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

/**
 * Recounts a sale's counters from its orders and repairs those that drifted, exactly even while orders
 * are written and paid: in one transaction the counter row is locked first (every statement that moves
 * a counter then waits for it at its end, its own order rows already changed and not yet visible), then
 * the recount reads with a snapshot taken after that lock, so an order change is either in the recount
 * or applied afterwards on top of the repaired value, never both or neither. Reads every order of the
 * sale: the reconciliation runs it once per pass of its walk through the ledger, or when asked for a
 * full run.
 */
export async function recountCounters(db: Db, saleId: string): Promise<CounterRepair[]> {
  const [, locked, recounted] = await withDb(() =>
    db.transaction([
      sql`insert into sale_counters (sale_id) values (${saleId}) on conflict do nothing`,
      sql`select * from sale_counters where sale_id = ${saleId} for update`,
      sql`with r as (${recount(saleId)})
          update sale_counters c set orders = r.orders, awaiting_payment = r.awaiting_payment, paid = r.paid,
            expired = r.expired, cancelled = r.cancelled, live_units = r.live_units,
            unrestored_units = r.unrestored_units
          from r where c.sale_id = ${saleId}
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
