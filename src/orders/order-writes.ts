import { sql } from "drizzle-orm";
import { type Db, withDb } from "../db/client";
import type { QueuedOrder } from "../stock/queued-order";
import { currentTraceParent } from "../tracing";
import type { OutboxEntry } from "../webhooks/event-types";
import { orderOutboxInsert, outboxColumn, outboxOf } from "../webhooks/outbox-sql";
import type { OrderRow } from "./order-view";

const iso = (ms: number) => new Date(ms).toISOString();

export type WriteResult = {
  inserted: boolean;
  status: OrderRow["status"] | null;
  /** the Redis generation whose stock counts this order */
  orderEpoch: number;
  /** the sale's current Redis generation */
  saleEpoch: number;
};

/**
 * Writes reserved orders, each once: the rows (awaiting payment; `written_at` records the write, so the
 * flow record `order_events` starts at the order's first change after it) and the users' holdings, in
 * one statement for the whole batch (sent unnamed, so planned at each call: named, its generic plan is
 * the dearer, bench/order-write-cost.ts). Nothing about one order can refuse the others: the
 * per-user limit is not a constraint here (an acknowledged order is written even when a late write
 * takes its user over the limit; the sale's stats report that), and an order naming a sale that does
 * not exist is left out of the result (the caller decides). A replay or a duplicate delivery inserts
 * nothing. The sales rows are read FOR SHARE, so a write and a rebuild of a sale's Redis state (which
 * locks that row) never interleave: either the rebuild sees the order, or this write sees the rebuild's
 * new epoch and the order is counted again (debit-stock.lua). Rows are locked in key order (sales,
 * orders, holdings), so two batches sharing a user or an order wait for each other instead of
 * deadlocking on a lock-order cycle (a deadlock was seen once in the benchmark when 600 queued orders
 * were released at once; not reproduced by test/integration/orders/concurrent-writes.test.ts).
 * An order's lines are the reservation's (variant, units), named and priced from the sale's variants
 * (their prices never change; the job's own price is used only for a variant the sale does not list);
 * a queued order from before variants has none and gets its one line from the database (the trigger
 * of drizzle/0013_sale_variants.sql).
 * The same statement writes the webhook outbox entries of the orders it inserted (`order.reserved`
 * and `order.awaiting_payment`, for the endpoints subscribed to them: none, nothing written), returned
 * in `webhooks` for the caller to publish.
 */
export async function writeOrders(
  db: Db,
  batch: QueuedOrder[],
): Promise<{ written: Map<string, WriteResult>; webhooks: OutboxEntry[] }> {
  const input = JSON.stringify(
    batch.map((o) => ({
      id: o.orderId,
      sale_id: o.saleId,
      user_id: o.userId,
      quantity: o.quantity,
      created_at: iso(o.createdAt),
      expires_at: iso(o.expiresAt),
      epoch: o.epoch,
      items: o.items ?? null,
    })),
  );
  const result = await withDb(() =>
    db.execute<Record<string, unknown>>(
      sql`
      with input as (
        select * from jsonb_to_recordset(${input}::jsonb) as x(
          id text, sale_id text, user_id text, quantity int, created_at timestamptz, expires_at timestamptz, epoch int,
          items jsonb)
      ), s as (
        select id, epoch, per_user_limit from sales where id in (select sale_id from input) order by id for share
      ), ins as (
        insert into orders (id, sale_id, user_id, quantity, status, created_at, expires_at, epoch, items, amount_cents,
          trace_parent)
        select i.id, i.sale_id, i.user_id, i.quantity, 'awaiting_payment', i.created_at, i.expires_at, i.epoch,
          li.items, li.amount, ${currentTraceParent()}::text
        from input i join s on s.id = i.sale_id
        left join lateral (
          select jsonb_agg(jsonb_build_object('variantId', e ->> 'variantId', 'name', coalesce(v.name, e ->> 'variantId'),
                   'quantity', (e ->> 'quantity')::int, 'priceCents', coalesce(v.price_cents, (e ->> 'priceCents')::int))
                   order by n) as items,
                 sum((e ->> 'quantity')::bigint * coalesce(v.price_cents, (e ->> 'priceCents')::int)) as amount
          from jsonb_array_elements(i.items) with ordinality as t(e, n)
          left join sale_variants v on v.sale_id = i.sale_id and v.variant_id = e ->> 'variantId'
        ) li on true
        -- an order without lines of a sale of several variants cannot be written (a malformed job): left
        -- out like an order of an unknown sale, never failing the batch
        where li.items is not null or (select count(*) from sale_variants v where v.sale_id = i.sale_id) = 1
        order by i.id
        on conflict (id) do nothing
        returning id, sale_id, user_id, quantity, status, epoch, created_at, expires_at, null::timestamptz as paid_at,
          items, amount_cents
      ), held as (
        insert into holdings (sale_id, user_id, units, per_user_limit)
        select ins.sale_id, ins.user_id, sum(ins.quantity)::int, min(s.per_user_limit)
        from ins join s on s.id = ins.sale_id group by ins.sale_id, ins.user_id
        order by ins.sale_id, ins.user_id
        on conflict (sale_id, user_id) do update set units = holdings.units + excluded.units
        returning 1
      ), ob as (${orderOutboxInsert(sql`ins`, ["order.reserved", "order.awaiting_payment"], { payment: false })})
      select i.id, (ins.id is not null) as inserted, coalesce(ins.status, o.status) as status,
             coalesce(ins.epoch, o.epoch) as order_epoch, s.epoch as sale_epoch, ${outboxColumn(sql`ob`)}
      from input i join s on s.id = i.sale_id
      left join ins on ins.id = i.id
      left join orders o on o.id = i.id`,
    ),
  );
  const written = new Map<string, WriteResult>();
  const unseen = new Map<string, number>();
  for (const row of result.rows) {
    if (row.status === null || row.status === undefined) {
      unseen.set(String(row.id), Number(row.sale_epoch ?? 1));
      continue;
    }
    written.set(String(row.id), {
      inserted: row.inserted === true || row.inserted === "t",
      status: (row.status as OrderRow["status"] | null) ?? null,
      orderEpoch: Number(row.order_epoch ?? 1),
      saleEpoch: Number(row.sale_epoch ?? 1),
    });
  }
  for (const [id, found] of await committedMeanwhile(db, unseen)) written.set(id, found);
  return { written, webhooks: outboxOf(result.rows) };
}

/**
 * The orders the write's statement neither inserted nor saw: a batch racing it inserted them and
 * committed after the statement's snapshot was taken (its insert waited for that batch, then skipped
 * the row), so they are read again in a new statement. What is still missing could not be written
 * (a drop's order without lines). Runs only when a race happened.
 */
async function committedMeanwhile(db: Db, unseen: Map<string, number>): Promise<Map<string, WriteResult>> {
  const found = new Map<string, WriteResult>();
  if (unseen.size === 0) return found;
  const ids = [...unseen.keys()];
  const result = await withDb(() =>
    db.execute<{ id: string; status: OrderRow["status"]; epoch: number }>(
      sql`select id, status, epoch from orders
        where id in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))`,
    ),
  );
  for (const row of result.rows) {
    found.set(String(row.id), {
      inserted: false,
      status: row.status,
      orderEpoch: Number(row.epoch ?? 1),
      saleEpoch: unseen.get(String(row.id)) ?? 1,
    });
  }
  return found;
}

/** Records that the order's units are counted in the sale's current Redis generation. */
export async function markCounted(db: Db, orderId: string, epoch: number): Promise<void> {
  await withDb(() =>
    db.execute(sql`update orders set epoch = ${epoch} where id = ${orderId} and epoch < ${epoch}`),
  );
}
