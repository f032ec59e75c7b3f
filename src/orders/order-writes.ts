import { sql } from "drizzle-orm";
import { type Db, withDb } from "../db/client";
import type { QueuedOrder } from "../stock/queued-order";
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
 * one statement for the whole batch (sent unnamed, so planned at each call: a named statement's
 * generic plan, made while the tables are young, went on scanning them as they grew, bench/order-write-cost.ts). Nothing about one order can refuse the others: the
 * per-user limit is not a constraint here (an acknowledged order is written even when a late write
 * takes its user over the limit; the sale's stats report that), and an order naming a sale that does
 * not exist is left out of the result (the caller decides). A replay or a duplicate delivery inserts
 * nothing. The sales rows are read FOR SHARE, so a write and a rebuild of a sale's Redis state (which
 * locks that row) never interleave: either the rebuild sees the order, or this write sees the rebuild's
 * new epoch and the order is counted again (debit-stock.lua). Rows are locked in key order (sales,
 * orders, holdings), so two batches sharing a user or an order wait for each other instead of
 * deadlocking on a lock-order cycle (a deadlock was seen once in the benchmark when 600 queued orders
 * were released at once; not reproduced by test/integration/order-writes-concurrency.test.ts).
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
    })),
  );
  const result = await withDb(() =>
    db.execute<Record<string, unknown>>(
      sql`
      with input as (
        select * from jsonb_to_recordset(${input}::jsonb) as x(
          id text, sale_id text, user_id text, quantity int, created_at timestamptz, expires_at timestamptz, epoch int)
      ), s as (
        select id, epoch, per_user_limit from sales where id in (select sale_id from input) order by id for share
      ), ins as (
        insert into orders (id, sale_id, user_id, quantity, status, created_at, expires_at, epoch)
        select i.id, i.sale_id, i.user_id, i.quantity, 'awaiting_payment', i.created_at, i.expires_at, i.epoch
        from input i join s on s.id = i.sale_id
        order by i.id
        on conflict (id) do nothing
        returning id, sale_id, user_id, quantity, status, epoch, created_at, expires_at, null::timestamptz as paid_at
      ), held as (
        insert into holdings (sale_id, user_id, units, per_user_limit)
        select ins.sale_id, ins.user_id, sum(ins.quantity)::int, min(s.per_user_limit)
        from ins join s on s.id = ins.sale_id group by ins.sale_id, ins.user_id
        order by ins.sale_id, ins.user_id
        on conflict (sale_id, user_id) do update set units = holdings.units + excluded.units
        returning 1
      ), ob as (${orderOutboxInsert(sql`ins`, ["order.reserved", "order.awaiting_payment"])})
      select i.id, (ins.id is not null) as inserted, coalesce(ins.status, o.status) as status,
             coalesce(ins.epoch, o.epoch) as order_epoch, s.epoch as sale_epoch, ${outboxColumn(sql`ob`)}
      from input i join s on s.id = i.sale_id
      left join ins on ins.id = i.id
      left join orders o on o.id = i.id`,
    ),
  );
  const written = new Map<string, WriteResult>();
  for (const row of result.rows) {
    written.set(String(row.id), {
      inserted: row.inserted === true || row.inserted === "t",
      status: (row.status as OrderRow["status"] | null) ?? null,
      orderEpoch: Number(row.order_epoch ?? 1),
      saleEpoch: Number(row.sale_epoch ?? 1),
    });
  }
  return { written, webhooks: outboxOf(result.rows) };
}

/** Records that the order's units are counted in the sale's current Redis generation. */
export async function markCounted(db: Db, orderId: string, epoch: number): Promise<void> {
  await withDb(() =>
    db.execute(sql`update orders set epoch = ${epoch} where id = ${orderId} and epoch < ${epoch}`),
  );
}
