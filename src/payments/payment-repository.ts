import { sql } from "drizzle-orm";
import { type Db, withDb } from "../db/client";
import { ROW_SQL, toOrderRow } from "../orders/order-repository";
import type { OrderPayment, OrderRow } from "../orders/order-view";
import type { OutboxEntry } from "../webhooks/event-types";
import { orderOutboxInsert, outboxColumn, outboxOf } from "../webhooks/outbox-sql";

/** An order's open checkout as stored: the same one is handed out on every retry. */
export type StoredCheckout = { checkoutId: string; url: string };

/** The checkout stored on an order, or null before one was opened. */
export async function storedCheckout(db: Db, orderId: string): Promise<StoredCheckout | null> {
  const result = await withDb(() =>
    db.execute<{ checkout_id: string | null; checkout_url: string | null }>(
      sql`select checkout_id, checkout_url from orders where id = ${orderId}`,
    ),
  );
  const row = result.rows[0];
  return row?.checkout_id && row.checkout_url ? { checkoutId: row.checkout_id, url: row.checkout_url } : null;
}

/**
 * Stores a new checkout on an order still awaiting payment, unless one is there already, and answers the
 * one stored (the first writer's, whoever that was); null when the order left `awaiting_payment`.
 */
export async function storeCheckout(
  db: Db,
  orderId: string,
  checkout: StoredCheckout,
  payment: Omit<OrderPayment, "status">,
): Promise<StoredCheckout | null> {
  await withDb(() =>
    db.execute(sql`
      update orders set checkout_id = ${checkout.checkoutId}, checkout_url = ${checkout.url},
        payment_provider = ${payment.provider}, payment_status = 'pending',
        payment_amount_cents = ${payment.amountCents}, payment_currency = ${payment.currency}
      where id = ${orderId} and status = 'awaiting_payment' and expires_at > now() and checkout_id is null`),
  );
  // the window by the database's clock: a checkout is never handed out for an order it considers closed
  const result = await withDb(() =>
    db.execute<{ checkout_id: string | null; checkout_url: string | null; status: string; open: boolean }>(
      sql`select checkout_id, checkout_url, status, expires_at > now() as open from orders where id = ${orderId}`,
    ),
  );
  const row = result.rows[0];
  if (row?.status !== "awaiting_payment" || !row.open || !row.checkout_id || !row.checkout_url) return null;
  return { checkoutId: row.checkout_id, url: row.checkout_url };
}

/** A sale's name and unit price, what a checkout sells and a payment must amount to. */
export async function saleForPayment(
  db: Db,
  saleId: string,
): Promise<{ name: string; priceCents: number } | null> {
  const result = await withDb(() =>
    db.execute<{ name: string; price_cents: number }>(
      sql`select name, price_cents from sales where id = ${saleId}`,
    ),
  );
  const row = result.rows[0];
  return row ? { name: String(row.name), priceCents: Number(row.price_cents) } : null;
}

/** What a provider's payment of an order is held against: its row, the checkout opened for it, its price. */
export type PaymentTarget = {
  /** The order's row; null while it is not in Postgres (no checkout can have been opened for it). */
  order: OrderRow | null;
  checkoutId: string | null;
  /** The `traceparent` of the order's write (with tracing on): its payment continues that trace. */
  traceParent: string | null;
  /** The sale's unit price: a payment amounts to it × the order's quantity. */
  priceCents: number;
};

/**
 * What a provider's payment of an order is checked against, in one read: the order's row, the checkout
 * stored on it and its sale's unit price; null when the sale does not exist.
 */
export async function paymentTarget(db: Db, saleId: string, orderId: string): Promise<PaymentTarget | null> {
  const result = await withDb(() =>
    db.execute<Record<string, unknown>>(sql`
      with o as (select ${ROW_SQL}, checkout_id, trace_parent from orders where id = ${orderId})
      select s.price_cents, o.* from sales s left join o on o.sale_id = s.id where s.id = ${saleId}`),
  );
  const r = result.rows[0];
  if (!r) return null;
  return {
    order: r.id === null || r.id === undefined ? null : toOrderRow(r),
    checkoutId: r.checkout_id === null || r.checkout_id === undefined ? null : String(r.checkout_id),
    traceParent: typeof r.trace_parent === "string" ? r.trace_parent : null,
    priceCents: Number(r.price_cents),
  };
}

/**
 * Records that a payment of an order that expired or was cancelled was given back: once, whatever the
 * number of callers. The order keeps its status. The same statement writes the `order.refunded` webhook
 * outbox entries (for the endpoints subscribed to it), so the refund is never recorded without its event:
 * for the call that recorded it, the order as it now stands and the entries to publish; null for every
 * other call.
 */
export async function recordRefund(
  db: Db,
  orderId: string,
  refund: { refundRef: string; paymentRef: string; payment: Omit<OrderPayment, "status"> },
): Promise<{ order: OrderRow; webhooks: OutboxEntry[] } | null> {
  const result = await withDb(() =>
    db.execute<Record<string, unknown>>(sql`
      with upd as (
        update orders set payment_status = 'refunded', refunded_at = now(), refund_ref = ${refund.refundRef},
          payment_ref = coalesce(payment_ref, ${refund.paymentRef}), payment_provider = ${refund.payment.provider},
          payment_amount_cents = ${refund.payment.amountCents}, payment_currency = ${refund.payment.currency}
        where id = ${orderId} and status in ('expired', 'cancelled') and payment_status is distinct from 'refunded'
        returning ${ROW_SQL}
      ), ob as (${orderOutboxInsert(sql`upd`, ["order.refunded"])})
      select *, ${outboxColumn(sql`ob`)} from upd`),
  );
  const row = result.rows[0];
  return row ? { order: toOrderRow(row), webhooks: outboxOf(result.rows) } : null;
}

/** Whether a provider event was handled before (a duplicated delivery changes nothing). */
export async function eventSeen(db: Db, eventId: string): Promise<boolean> {
  const result = await withDb(() =>
    db.execute<{ id: string }>(sql`select id from payment_events where id = ${eventId}`),
  );
  return result.rows.length > 0;
}

/** Records a provider event as handled, with what it came to (the first record stays). */
export async function recordEvent(
  db: Db,
  event: { id: string; provider: string; type: string; orderId: string | null; outcome: string },
): Promise<void> {
  await withDb(() =>
    db.execute(sql`
      insert into payment_events (id, provider, type, order_id, outcome)
      values (${event.id}, ${event.provider}, ${event.type}, ${event.orderId}, ${event.outcome})
      on conflict (id) do nothing`),
  );
}

/** Checkouts still open at the provider although their orders expired or were cancelled. */
export async function checkoutsToClose(
  db: Db,
  orderIds: string[],
): Promise<Array<{ orderId: string; checkoutId: string }>> {
  if (orderIds.length === 0) return [];
  const result = await withDb(() =>
    db.execute<{ id: string; checkout_id: string }>(sql`
      select id, checkout_id from orders
      where id in (select jsonb_array_elements_text(${JSON.stringify(orderIds)}::jsonb))
        and status in ('expired', 'cancelled') and checkout_id is not null and checkout_closed_at is null`),
  );
  return result.rows.map((r) => ({ orderId: r.id, checkoutId: r.checkout_id }));
}

/** Records that these orders' checkouts were closed at the provider. */
export async function markCheckoutsClosed(db: Db, orderIds: string[]): Promise<void> {
  if (orderIds.length === 0) return;
  await withDb(() =>
    db.execute(sql`
      update orders set checkout_closed_at = now()
      where id in (select jsonb_array_elements_text(${JSON.stringify(orderIds)}::jsonb))`),
  );
}
