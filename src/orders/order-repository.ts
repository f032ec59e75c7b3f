import { and, eq, sql } from "drizzle-orm";
import { type Db, withDb } from "../db/client";
import { orders } from "../db/schema";
import type { WebhookDeps } from "../services";
import type { OutboxEntry } from "../webhooks/event-types";
import { orderOutboxInsert, outboxColumn, outboxOf } from "../webhooks/outbox-sql";
import { publishOutbox } from "../webhooks/publish";
import type { OrderPayment, OrderRow } from "./order-view";

/** The columns {@link toOrderRow} reads, for the raw statements. */
const ROW_SQL = sql.raw(
  "id, sale_id, user_id, quantity, status, created_at, expires_at, paid_at, restored_at, epoch, payment_provider, payment_status, payment_amount_cents, payment_currency",
);

const rowColumns = {
  id: orders.id,
  saleId: orders.saleId,
  userId: orders.userId,
  quantity: orders.quantity,
  status: orders.status,
  createdAt: orders.createdAt,
  expiresAt: orders.expiresAt,
  paidAt: orders.paidAt,
  restoredAt: orders.restoredAt,
  epoch: orders.epoch,
  paymentProvider: orders.paymentProvider,
  paymentStatus: orders.paymentStatus,
  paymentAmountCents: orders.paymentAmountCents,
  paymentCurrency: orders.paymentCurrency,
};

/** An order row, optionally only if it belongs to `userId`. */
export async function findOrder(db: Db, orderId: string, userId?: string): Promise<OrderRow | null> {
  const where =
    userId === undefined ? eq(orders.id, orderId) : and(eq(orders.id, orderId), eq(orders.userId, userId));
  const rows = await withDb(() => db.select(rowColumns).from(orders).where(where).limit(1));
  const r = rows[0];
  if (!r) return null;
  const { paymentProvider, paymentStatus, paymentAmountCents, paymentCurrency, ...row } = r;
  return { ...row, payment: paymentOf(paymentProvider, paymentStatus, paymentAmountCents, paymentCurrency) };
}

type Transition = "paid" | "expired" | "cancelled";

/** The rows a transition won, and the webhook outbox entries it wrote for them (to publish). */
export type Transitioned = OrderRow[] & { webhooks: OutboxEntry[] };
/** What a transition to paid records besides the status: the payment's reference and its figures. */
export type TransitionOptions = { userId?: string; paymentRef?: string; payment?: OrderPayment };

/**
 * The one place an order's fate is decided: a conditional update from `awaiting_payment`. Exactly one
 * of paid / expired / cancelled can win; expired and cancelled give the users' holdings back in the same
 * statement. Payment needs the window still open and expiry needs it closed, both by the database's
 * clock, so a skewed worker clock cannot decide either. Takes many orders at once (a payment-timeout
 * job's batch); returns the rows this call won, with the webhook outbox entries (`order.paid`,
 * `order.expired`, `order.cancelled`) the same statement wrote for them in `webhooks`: publish them with
 * `publishOutbox` (src/webhooks/publish.ts), or the minute sweep does.
 */
export async function transitionOrders(
  db: Db,
  orderIds: string[],
  to: Transition,
  opts: TransitionOptions = {},
): Promise<Transitioned> {
  if (orderIds.length === 0) return Object.assign([], { webhooks: [] });
  const owner = opts.userId === undefined ? sql`true` : sql`user_id = ${opts.userId}`;
  const timing =
    to === "paid" ? sql`expires_at > now()` : to === "expired" ? sql`expires_at <= now()` : sql`true`;
  const set =
    to === "paid"
      ? sql`status = 'paid', paid_at = now(), payment_ref = ${opts.paymentRef ?? null}${paymentSet(opts.payment)}`
      : to === "expired"
        ? sql`status = 'expired', expired_at = now()`
        : sql`status = 'cancelled', cancelled_at = now()`;
  const releases = to === "paid" ? sql`false` : sql`true`;
  const result = await withDb(() =>
    db.execute<Record<string, unknown>>(sql`
      with upd as (
        update orders set ${set}
        where id in (select jsonb_array_elements_text(${JSON.stringify(orderIds)}::jsonb))
          and ${owner} and status = 'awaiting_payment' and ${timing}
        returning ${ROW_SQL}
      ), released as (
        update holdings h set units = h.units - r.units
        from (select sale_id, user_id, sum(quantity)::int as units from upd group by sale_id, user_id) r
        where ${releases} and h.sale_id = r.sale_id and h.user_id = r.user_id
        returning 1
      ), ev as (
        insert into order_events (order_id, sale_id, type) select id, sale_id, ${to} from upd
        on conflict do nothing returning 1
      ), ob as (${orderOutboxInsert(sql`upd`, [`order.${to}`])})
      select *, ${outboxColumn(sql`ob`)} from upd`),
  );
  return Object.assign(result.rows.map(toOrderRow), { webhooks: outboxOf(result.rows) });
}

/**
 * {@link transitionOrders} for one order: the row if this call won, else null. With `publishTo`, the
 * webhook event it wrote is published at once; without, the minute sweep publishes it.
 *
 * @example
 * const won = await transitionOrder(deps.db, orderId, "paid", { paymentRef, publishTo: deps });
 */
export async function transitionOrder(
  db: Db,
  orderId: string,
  to: Transition,
  opts: TransitionOptions & { publishTo?: WebhookDeps } = {},
): Promise<OrderRow | null> {
  const { publishTo, ...rest } = opts;
  const won = await transitionOrders(db, [orderId], to, rest);
  if (publishTo) await publishOutbox(publishTo, won.webhooks);
  return won[0] ?? null;
}

/** The rows of the given orders (those that exist). */
export async function findOrders(db: Db, orderIds: string[]): Promise<OrderRow[]> {
  if (orderIds.length === 0) return [];
  const result = await withDb(() =>
    db.execute<Record<string, unknown>>(sql`
      select ${ROW_SQL}
      from orders where id in (select jsonb_array_elements_text(${JSON.stringify(orderIds)}::jsonb))`),
  );
  return result.rows.map(toOrderRow);
}

/** Records that expired or cancelled orders' units are back in Redis (after restore-stock ran). */
export async function markRestored(db: Db, orderIds: string[]): Promise<void> {
  if (orderIds.length === 0) return;
  await withDb(() =>
    db.execute(sql`
      with upd as (
        update orders set restored_at = now()
        where id in (select jsonb_array_elements_text(${JSON.stringify(orderIds)}::jsonb))
          and status in ('expired', 'cancelled') and restored_at is null
        returning id, sale_id
      )
      insert into order_events (order_id, sale_id, type) select id, sale_id, 'restored' from upd
      on conflict do nothing`),
  );
}

/** Orders whose fate is decided but whose units are not yet back in Redis (oldest first). */
export async function findUnrestored(db: Db, limit: number): Promise<OrderRow[]> {
  const result = await withDb(() =>
    db.execute<Record<string, unknown>>(sql`
      select ${ROW_SQL} from orders
      where status in ('expired', 'cancelled') and restored_at is null order by created_at limit ${limit}`),
  );
  return result.rows.map(toOrderRow);
}

/** Unpaid orders whose payment window closed more than `graceSeconds` ago (their timeout job is late). */
export async function findOverdue(db: Db, graceSeconds: number, limit: number): Promise<string[]> {
  const result = await withDb(() =>
    db.execute<{ id: string }>(sql`
      select id from orders where status = 'awaiting_payment'
      and expires_at < now() - make_interval(secs => ${graceSeconds}) order by expires_at limit ${limit}`),
  );
  return result.rows.map((r) => r.id);
}

/** The payment columns a transition to paid sets (none without a payment). */
function paymentSet(payment: OrderPayment | undefined) {
  if (!payment) return sql``;
  return sql`, payment_provider = ${payment.provider}, payment_status = 'paid', payment_amount_cents = ${payment.amountCents}, payment_currency = ${payment.currency}`;
}

/** The contract's `payment` of an order from its columns (none before a provider took part). */
export function paymentOf(
  provider: unknown,
  status: unknown,
  amountCents: unknown,
  currency: unknown,
): OrderPayment | null {
  if (provider === null || provider === undefined || status === null || status === undefined) return null;
  return {
    provider: String(provider) as OrderPayment["provider"],
    status: status as OrderPayment["status"],
    amountCents: Number(amountCents ?? 0),
    currency: String(currency ?? ""),
  };
}

function toOrderRow(r: Record<string, unknown>): OrderRow {
  const date = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));
  return {
    id: String(r.id),
    saleId: String(r.sale_id),
    userId: String(r.user_id),
    quantity: Number(r.quantity),
    status: r.status as OrderRow["status"],
    createdAt: date(r.created_at) as Date,
    expiresAt: date(r.expires_at) as Date,
    paidAt: date(r.paid_at),
    restoredAt: date(r.restored_at),
    epoch: Number(r.epoch ?? 1),
    payment: paymentOf(r.payment_provider, r.payment_status, r.payment_amount_cents, r.payment_currency),
  };
}
