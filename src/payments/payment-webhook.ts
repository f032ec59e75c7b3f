import { StoreUnavailableError } from "../errors";
import { saleIdOfOrder } from "../ids";
import { rememberOrder } from "../orders/order-reads";
import { findOrder } from "../orders/order-repository";
import { rowView } from "../orders/order-view";
import { materializeOrder } from "../orders/order-write-job";
import type { PaymentDeps } from "../services";
import type { PaymentEvent } from "./payment-provider";
import { eventSeen, recordEvent, saleForPayment, storedCheckout } from "./payment-repository";
import { markOrderPaid, refundLatePayment } from "./payment-settlement";

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
 * order is a `mismatch`) whose amount and currency match its order (price × quantity, CURRENCY) makes it
 * paid through {@link markOrderPaid}, or, when the order expired or was cancelled first, is refunded
 * exactly once ({@link refundLatePayment}). A mismatch is recorded and leaves the order as it was. The
 * event is recorded as handled last, so a failure half-way is retried whole by the provider's redelivery
 * (every step is idempotent).
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
  const row = await materializeOrder(deps, saleId, event.orderId);
  const sale = row ? await saleForPayment(deps.db, row.saleId) : null;
  if (!row || !sale) return "unknown_order";
  // only the session the engine opened for this order pays it: another session of the same account that
  // names the order (a Payment Link with ?client_reference_id=, another integration) is not its payment
  const own = await storedCheckout(deps.db, row.id);
  if (own?.checkoutId !== event.checkoutId) {
    console.warn(
      `order ${row.id}: payment ${event.paymentRef} on session ${event.checkoutId}, not the order's checkout; not paid`,
    );
    return "mismatch";
  }
  const expected = sale.priceCents * row.quantity;
  if (event.amountCents !== expected || event.currency !== deps.config.CURRENCY) {
    console.warn(
      `order ${row.id}: payment ${event.paymentRef} of ${event.amountCents} ${event.currency} does not match ${expected} ${deps.config.CURRENCY}; not paid`,
    );
    return "mismatch";
  }
  const payment = {
    provider: deps.payments?.name ?? "stripe",
    amountCents: expected,
    currency: event.currency,
  };
  const outcome = await markOrderPaid(deps, saleId, row, {
    paymentRef: event.paymentRef,
    payment: { ...payment, status: "paid" },
  });
  switch (outcome.kind) {
    case "paid":
      rememberOrder(deps.memory, row.userId, rowView(outcome.order));
      return outcome.now ? "paid" : "final";
    case "expired":
    case "cancelled": {
      await refundLatePayment(deps, outcome.order, { paymentRef: event.paymentRef, payment });
      const refreshed = await findOrder(deps.db, row.id);
      if (refreshed) rememberOrder(deps.memory, row.userId, rowView(refreshed));
      return "refunded";
    }
    case "changed":
      // the provider delivers again (503): by then the order's fate is decided
      throw new StoreUnavailableError("postgres", new Error(`order ${row.id} changed while paid`));
  }
}
