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
  /** units of orders this Redis reading had back that Postgres still counts as to restore */
  given_back: number | null;
  /** units of orders this Redis reading still counted that Postgres marked restored since */
  marked_since: number | null;
  over_limit: unknown;
};

/**
 * The sale's counters (one row, kept by the orders' triggers), the units of the queued orders Postgres
 * already has (written, not yet acknowledged: counted once, as queued), the units of the restores in
 * flight by what the Redis reading had back (`givenBack` of the `unrestored` read before it), and the
 * users over the limit (a partial index holds only those): a cost that does not grow with the sale.
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
      )
      select c.orders, c.awaiting_payment, c.paid, c.expired, c.cancelled, c.live_units, c.unrestored_units,
        (select coalesce(sum(quantity), 0) from q where status in ('awaiting_payment', 'paid'))::int as queued_live,
        (select coalesce(sum(quantity), 0) from q
          where status in ('expired', 'cancelled') and restored_at is null)::int as queued_unrestored,
        (select coalesce(sum(quantity), 0) from orders where id in ${ids(r.givenBack)}
          and sale_id = ${saleId} and restored_at is null)::int as given_back,
        (select coalesce(sum(quantity), 0) from orders where id in ${ids(counted)}
          and sale_id = ${saleId} and restored_at is not null)::int as marked_since,
        (select coalesce(json_agg(user_id), '[]'::json) from holdings
          where sale_id = ${saleId} and units > per_user_limit) as over_limit
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
