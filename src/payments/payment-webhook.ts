import { StoreUnavailableError } from "../errors";
import { saleIdOfOrder } from "../ids";
import { markPaid } from "../orders/order-lifecycle";
import { rememberOrder } from "../orders/order-reads";
import { findOrder } from "../orders/order-repository";
import { type OrderPayment, type OrderRow, rowView } from "../orders/order-view";
import { readQueuedOrder } from "../orders/queued-order-store";
import type { PaymentDeps } from "../services";
import { continueTrace } from "../tracing";
import { publishOutbox } from "../webhooks/publish";
import type { PaymentEvent } from "./payment-provider";
import {
  eventSeen,
  type PaymentTarget,
  paymentTarget,
  recordEvent,
  recordRefund,
} from "./payment-repository";

/** What a verified provider event came to (the webhook answers 200 for each; a store failure is 503). */
export type EventOutcome =
  | "duplicate"
  | "ignored"
  | "unknown_order"
  | "mismatch"
  | "paid"
  | "refunded"
  | "final";

/**
 * Handles a verified provider event once: an event id seen before changes nothing (`duplicate`); a
 * completed payment on the order's own checkout (the session stored on it; any other session naming the
 * order is a `mismatch`, as is any session of an order still queued, whose checkout cannot be open yet)
 * whose amount and currency match its order (price × quantity, CURRENCY) makes it paid through the
 * order lifecycle's paid step (src/orders/order-lifecycle.ts `markPaid`), or, when the order expired or
 * was cancelled first, is refunded exactly once ({@link refundLatePayment}). The order, its checkout and
 * its price are read in one statement; nothing is written for an order not yet in Postgres. A mismatch
 * is recorded and leaves the order as it was. The event is recorded as handled last, so a failure
 * half-way is retried whole by the provider's redelivery (every step is idempotent).
 *
 * @example
 * const event = await deps.payments.verifyEvent(body, signature);
 * if (event) await handlePaymentEvent(deps, event);
 */
export async function handlePaymentEvent(deps: PaymentDeps, event: PaymentEvent): Promise<EventOutcome> {
  if (await eventSeen(deps.db, event.eventId)) return "duplicate";
  const outcome = await settle(deps, event);
  await recordEvent(deps.db, {
    id: event.eventId,
    provider: deps.payments?.name ?? "stripe",
    type: event.type,
    orderId: event.orderId,
    outcome,
  });
  return outcome;
}

async function settle(deps: PaymentDeps, event: PaymentEvent): Promise<EventOutcome> {
  if (event.kind !== "paid") return "ignored";
  const saleId = event.orderId ? saleIdOfOrder(event.orderId) : null;
  if (!event.orderId || !saleId) return "unknown_order";
  const target = await paymentTarget(deps.db, saleId, event.orderId);
  // the rest is a step of the order's own trace (its buy and write), linked to this delivery's request
  return continueTrace(
    target?.traceParent,
    `payment ${event.type}`,
    { "flash_sale.order_id": event.orderId, "flash_sale.payment_event": event.eventId },
    () => settleOrder(deps, { ...event, orderId: event.orderId as string }, saleId, target),
  );
}

async function settleOrder(
  deps: PaymentDeps,
  event: Extract<PaymentEvent, { kind: "paid" }> & { orderId: string },
  saleId: string,
  target: PaymentTarget | null,
): Promise<EventOutcome> {
  const row = target?.order ?? null;
  if (!target || (!row && !(await readQueuedOrder(deps.redis, saleId, event.orderId))))
    return "unknown_order";
  // only the session the engine opened for this order pays it: another session of the same account that
  // names the order (a Payment Link with ?client_reference_id=, another integration) is not its payment,
  // nor is any session of an order still queued (its checkout is opened once it is written)
  if (!row || target.checkoutId !== event.checkoutId) {
    console.warn(
      `order ${event.orderId}: payment ${event.paymentRef} on session ${event.checkoutId}, not the order's checkout; not paid`,
    );
    return "mismatch";
  }
  const expected = row.amountCents;
  if (event.amountCents !== expected || event.currency !== deps.config.CURRENCY) {
    console.warn(
      `order ${row.id}: payment ${event.paymentRef} of ${event.amountCents} ${event.currency} does not match ${expected} ${deps.config.CURRENCY}; not paid`,
    );
    // money the order's own checkout took after the order expired or was cancelled is given back and
    // shown on the order, whatever its amount, as every late payment is; an order still open or paid is
    // left to the operator (the payment that paid it, or one still to be matched, is never refunded here)
    if (row.status !== "expired" && row.status !== "cancelled") return "mismatch";
    const refunded = await refundLatePayment(deps, row, {
      paymentRef: event.paymentRef,
      payment: {
        provider: deps.payments?.name ?? "stripe",
        amountCents: event.amountCents,
        currency: event.currency,
      },
    });
    return refunded.payment?.status === "refunded" ? "refunded" : "mismatch";
  }
  const payment = {
    provider: deps.payments?.name ?? "stripe",
    amountCents: expected,
    currency: event.currency,
  };
  const { order, now } = await markPaid(deps, row, {
    paymentRef: event.paymentRef,
    payment: { ...payment, status: "paid" },
  });
  const settled =
    order.status === "expired" || order.status === "cancelled"
      ? await refundLatePayment(deps, order, { paymentRef: event.paymentRef, payment })
      : order;
  // the provider delivers again (503): by then the order's fate is decided
  if (settled.status === "awaiting_payment")
    throw new StoreUnavailableError("postgres", new Error(`order ${row.id} changed while paid`));
  rememberOrder(deps.memory, row.userId, rowView(settled));
  return settled.status !== "paid" ? "refunded" : now ? "paid" : "final";
}

/**
 * Gives back a payment that arrived after its order expired or was cancelled: one refund whatever the
 * number of deliveries (the provider's refund is idempotent by payment, and nothing is asked once the
 * order shows the refund), recorded on the order, which keeps its final status; the
 * call that recorded it publishes the `order.refunded` event its statement wrote. Returns the order as
 * this call last read or wrote it.
 */
async function refundLatePayment(
  deps: PaymentDeps,
  order: OrderRow,
  paid: { paymentRef: string; payment: Omit<OrderPayment, "status"> },
): Promise<OrderRow> {
  const current = (await findOrder(deps.db, order.id)) ?? order;
  if (!deps.payments || current.payment?.status === "refunded") return current;
  const refundRef = await deps.payments.refund(order.id, paid.paymentRef);
  const refunded = await recordRefund(deps.db, order.id, { refundRef, ...paid });
  if (!refunded) return current;
  console.warn(
    `order ${order.id}: paid after it was ${order.status}; refunded ${paid.payment.amountCents} ${paid.payment.currency} (${refundRef})`,
  );
  // written with the refund in one statement; a failed publish is left to the sweep
  await publishOutbox(deps, refunded.webhooks);
  return refunded.order;
}
