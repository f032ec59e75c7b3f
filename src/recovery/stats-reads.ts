import { sql } from "drizzle-orm";
import { withDb } from "../db/client";
import type { StatsDeps } from "../services";
import { countersOf } from "./sale-counters";

/** The Postgres reads behind a sale's stats (src/recovery/sale-stats.ts), each bounded whatever the sale's size. */

export type CounterRow = {
  orders: number | null;
  awaiting_payment: number | null;
  paid: number | null;
  expired: number | null;
  cancelled: number | null;
  live_units: number | null;
  unrestored_units: number | null;
  queued_live: number | null;
  queued_unrestored: number | null;
  /** the queued orders Postgres already has (written, not yet acknowledged): counted by status there */
  queued_written: number | null;
  /** units of orders this Redis reading had back that Postgres still counts as to restore */
  given_back: number | null;
  /** units of orders this Redis reading still counted that Postgres marked restored since */
  marked_since: number | null;
  over_limit: unknown;
  /** the sale's variants in order, each a {@link VariantCounterRow} (JSON, parsed or as text) */
  variants: unknown;
  /** users over a variant's own cap in live orders: [{variantId, userId}] (JSON, parsed or as text) */
  variant_over_limit: unknown;
};

/**
 * A variant's figures from Postgres: its stock (initial + adjustments) and cap, and the units of its lines
 * in the same groups as the sale's counters (live, paid, to restore; of the queued orders; of the restores
 * in flight), read from the orders' lines in the same statement, so they agree with the counters.
 */
export type VariantCounterRow = {
  variantId: string;
  stock: number;
  cap: number | null;
  live: number;
  paid: number;
  unrestored: number;
  queuedLive: number;
  queuedUnrestored: number;
  givenBack: number;
  markedSince: number;
};

/**
 * The sale's counters (one row, kept by the orders' triggers), the units of the queued orders Postgres
 * already has (written, not yet acknowledged: counted once, as queued), the units of the restores in
 * flight by what the Redis reading had back (`givenBack` of the `unrestored` read before it), and the
 * users over the limit (a partial index holds only those): a cost that does not grow with the sale. The
 * figures per variant are summed from the lines of the sale's live orders and restores in flight
 * (`orders.items`), in the same statement: a cost that grows with the sale's live orders (an index scan of
 * `orders_sale_status_idx`), paid for the per-variant invariant.
 */
export async function readCounters(
  deps: StatsDeps,
  saleId: string,
  r: { queuedIds: string[]; givenBack: string[]; unrestored: string[] },
): Promise<CounterRow> {
  const ids = (list: string[]) => sql`(select jsonb_array_elements_text(${JSON.stringify(list)}::jsonb))`;
  const back = new Set(r.givenBack);
  const counted = r.unrestored.filter((id) => !back.has(id));
  const result = await withDb(() =>
    deps.db.execute<CounterRow>(sql`
      with q as (
        select status, quantity, restored_at from orders
        where id in ${ids(r.queuedIds)} and sale_id = ${saleId}
      ), p as (
        select array${ids(r.queuedIds)} as queued, array${ids(r.givenBack)} as back, array${ids(counted)} as counted
      ), lines as (
        select e->>'variantId' as variant_id, (e->>'quantity')::int as units, o.id, o.user_id, o.status,
          o.restored_at, o.id = any(p.queued) as queued, o.id = any(p.back) as back,
          o.id = any(p.counted) as counted
        from orders o cross join p cross join lateral jsonb_array_elements(o.items) e
        where o.sale_id = ${saleId}
          and (o.status in ('awaiting_payment', 'paid') or o.restored_at is null or o.id = any(p.counted))
      ), by_variant as (
        select variant_id,
          coalesce(sum(units) filter (where status in ('awaiting_payment', 'paid')), 0)::int as live,
          coalesce(sum(units) filter (where status = 'paid'), 0)::int as paid,
          coalesce(sum(units) filter (where status in ('expired', 'cancelled') and restored_at is null), 0)::int
            as unrestored,
          coalesce(sum(units) filter (where queued and status in ('awaiting_payment', 'paid')), 0)::int
            as queued_live,
          coalesce(sum(units) filter (where queued and status in ('expired', 'cancelled')
            and restored_at is null), 0)::int as queued_unrestored,
          coalesce(sum(units) filter (where back and restored_at is null), 0)::int as given_back,
          coalesce(sum(units) filter (where counted and restored_at is not null), 0)::int as marked_since
        from lines group by variant_id
      ), held as (
        select variant_id, user_id, sum(units) as units from lines
        where status in ('awaiting_payment', 'paid') group by variant_id, user_id
      )
      select c.orders, c.awaiting_payment, c.paid, c.expired, c.cancelled, c.live_units, c.unrestored_units,
        (select count(*) from q)::int as queued_written,
        (select coalesce(sum(quantity), 0) from q where status in ('awaiting_payment', 'paid'))::int as queued_live,
        (select coalesce(sum(quantity), 0) from q
          where status in ('expired', 'cancelled') and restored_at is null)::int as queued_unrestored,
        (select coalesce(sum(quantity), 0) from orders where id in ${ids(r.givenBack)}
          and sale_id = ${saleId} and restored_at is null)::int as given_back,
        (select coalesce(sum(quantity), 0) from orders where id in ${ids(counted)}
          and sale_id = ${saleId} and restored_at is not null)::int as marked_since,
        (select coalesce(json_agg(user_id), '[]'::json) from holdings
          where sale_id = ${saleId} and units > per_user_limit) as over_limit,
        (select coalesce(json_agg(json_build_object('variantId', v.variant_id,
            'stock', v.initial_stock + v.stock_adjustments, 'cap', v.per_user_limit,
            'live', coalesce(b.live, 0), 'paid', coalesce(b.paid, 0), 'unrestored', coalesce(b.unrestored, 0),
            'queuedLive', coalesce(b.queued_live, 0), 'queuedUnrestored', coalesce(b.queued_unrestored, 0),
            'givenBack', coalesce(b.given_back, 0), 'markedSince', coalesce(b.marked_since, 0))
            order by v.position), '[]'::json)
          from sale_variants v left join by_variant b on b.variant_id = v.variant_id
          where v.sale_id = ${saleId}) as variants,
        (select coalesce(json_agg(json_build_object('variantId', h.variant_id, 'userId', h.user_id)), '[]'::json)
          from held h join sale_variants v on v.sale_id = ${saleId} and v.variant_id = h.variant_id
          where v.per_user_limit is not null and h.units > v.per_user_limit) as variant_over_limit
      from (${countersOf(saleId)}) c`),
  );
  return result.rows[0] as CounterRow;
}

/** Bound on the restores in flight a reading looks at one by one (the sweep settles them in batches of 200). */
const UNRESTORED_READ = 5_000;

/** Orders whose fate is decided and whose units Postgres has not recorded back: the restore backlog. */
export async function readUnrestored(deps: StatsDeps, saleId: string): Promise<string[]> {
  const result = await withDb(() =>
    deps.db.execute<{ id: string }>(sql`
      select id from orders where sale_id = ${saleId} and status in ('expired', 'cancelled')
        and restored_at is null limit ${UNRESTORED_READ}`),
  );
  return result.rows.map((row) => row.id);
}
