import { and, eq, sql } from "drizzle-orm";
import { type AuditEntry, auditInsert } from "../db/audit-log";
import { type Db, withDb } from "../db/client";
import { type OrderItem, orders } from "../db/schema";
import type { QueuedOrder } from "../stock/queued-order";
import type { OutboxEntry } from "../webhooks/event-types";
import { orderOutboxInsert, outboxColumn, outboxOf } from "../webhooks/outbox-sql";
import type { OrderPayment, OrderRow } from "./order-view";

/** The columns {@link toOrderRow} reads, for the raw statements. */
export const ROW_SQL = sql.raw(
  "id, sale_id, user_id, quantity, status, created_at, expires_at, paid_at, restored_at, epoch, payment_provider, payment_status, payment_amount_cents, payment_currency, items, amount_cents",
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
  items: orders.items,
  amountCents: orders.amountCents,
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

/** The rows a transition won, and the webhook outbox entries it wrote for them (for the caller to publish). */
export type Transitioned = { won: OrderRow[]; webhooks: OutboxEntry[] };
/** What a transition records besides the status: the owner it must have, the payment's reference and figures. */
export type TransitionOptions = {
  userId?: string;
  paymentRef?: string;
  payment?: OrderPayment;
  /** an operator's change: its audit entry, appended in the same statement for each order it won */
  audit?: AuditEntry;
};

/**
 * The one place an order's fate is decided: a conditional update from `awaiting_payment`. Exactly one
 * of paid / expired / cancelled can win; expired and cancelled give the users' holdings back in the same
 * statement. Payment needs the window still open and expiry needs it closed, both by the database's
 * clock, so a skewed worker clock cannot decide either. Takes many orders at once (a payment-timeout
 * job's batch); returns the rows this call won, and the webhook outbox entries (`order.paid`,
 * `order.expired`, `order.cancelled`) the same statement wrote for them: the caller publishes those
 * (src/orders/order-lifecycle.ts), or the minute sweep does.
 *
 * @example
 * const { won, webhooks } = await transitionOrders(deps.db, [orderId], "paid", { paymentRef });
 */
export async function transitionOrders(
  db: Db,
  orderIds: string[],
  to: Transition,
  opts: TransitionOptions = {},
): Promise<Transitioned> {
  if (orderIds.length === 0) return { won: [], webhooks: [] };
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
  const audited = opts.audit ? sql`, au as (${auditInsert(opts.audit, { tail: sql`from upd` })})` : sql``;
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
      ), ob as (${orderOutboxInsert(sql`upd`, [`order.${to}`])})${audited}
      select *, ${outboxColumn(sql`ob`)} from upd`),
  );
  return { won: result.rows.map(toOrderRow), webhooks: outboxOf(result.rows) };
}

/**
 * Inserts a voided reservation as a cancelled order unless a row exists (then nothing changes), with
 * its flow record (written, cancelled), and its lines named after the sale's variants (a reservation
 * without lines, a sale of one's, gets its line from the insert trigger).
 */
export async function insertCancelled(db: Db, o: QueuedOrder): Promise<void> {
  const iso = (ms: number) => new Date(ms).toISOString();
  const lines = o.items && o.items.length > 0 ? JSON.stringify(o.items) : null;
  await withDb(() =>
    db.execute(sql`
      with lines as (
        select jsonb_agg(jsonb_build_object('variantId', e.line->>'variantId',
                 'name', coalesce(v.name, e.line->>'variantId'), 'quantity', (e.line->>'quantity')::int,
                 'priceCents', coalesce(v.price_cents, (e.line->>'priceCents')::int)) order by e.n) as items,
               sum((e.line->>'quantity')::bigint * coalesce(v.price_cents, (e.line->>'priceCents')::int)) as amount
        from jsonb_array_elements(${lines}::jsonb) with ordinality as e(line, n)
        left join sale_variants v on v.sale_id = ${o.saleId} and v.variant_id = e.line->>'variantId'
      ), ins as (
        insert into orders (id, sale_id, user_id, quantity, status, created_at, expires_at, epoch, cancelled_at,
                            items, amount_cents)
        select ${o.orderId}, s.id, ${o.userId}, ${o.quantity}, 'cancelled', ${iso(o.createdAt)}::timestamptz,
               ${iso(o.expiresAt)}::timestamptz, ${o.epoch}, now(), lines.items, lines.amount
        from sales s, lines where s.id = ${o.saleId}
        on conflict (id) do nothing
        returning id, sale_id
      )
      insert into order_events (order_id, sale_id, type)
      select id, sale_id, t.type from ins, (values ('written'), ('cancelled')) as t(type)
      on conflict do nothing`),
  );
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

/** An order row from a raw statement's result row ({@link ROW_SQL}'s columns). */
export function toOrderRow(r: Record<string, unknown>): OrderRow {
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
    items: itemsOf(r.items),
    amountCents: Number(r.amount_cents ?? 0),
  };
}

/** The `items` column as any driver gives it (parsed JSON or its text). */
function itemsOf(value: unknown): OrderItem[] {
  const parsed = typeof value === "string" ? (JSON.parse(value) as unknown) : value;
  if (!Array.isArray(parsed)) return [];
  return parsed.map((i: Partial<OrderItem>) => ({
    variantId: String(i.variantId),
    name: String(i.name ?? i.variantId),
    quantity: Number(i.quantity),
    priceCents: Number(i.priceCents),
  }));
}
