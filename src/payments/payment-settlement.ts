import { expireOrder } from "../orders/order-lifecycle";
import { findOrder, transitionOrder } from "../orders/order-repository";
import type { OrderPayment, OrderRow } from "../orders/order-view";
import type { PaymentDeps } from "../services";
import { publishOutbox } from "../webhooks/publish";
import { isRefunded, recordRefund } from "./payment-repository";

/** What recording a payment came to: the order paid (now or before), or closed before the money came. */
export type SettleOutcome =
  | { kind: "paid"; order: OrderRow; now: boolean }
  | { kind: "expired"; order: OrderRow }
  | { kind: "cancelled"; order: OrderRow }
  | { kind: "changed" };

/**
 * The one way a provider's payment makes an order paid: the conditional update that also decides
 * expired and cancelled (orders/order-repository.ts `transitionOrder`), so exactly one of them wins. A
 * payment whose window closed by the database's clock expires the order here instead (its units come
 * back); the caller then gives the money back ({@link refundLatePayment}). `now` is true for the call
 * that made the order paid (where an `order.paid` notice belongs).
 *
 * @example
 * const outcome = await markOrderPaid(deps, saleId, row, { paymentRef: "pi_1", payment });
 */
export async function markOrderPaid(
  deps: PaymentDeps,
  saleId: string,
  row: OrderRow,
  paid: { paymentRef: string; payment: OrderPayment },
): Promise<SettleOutcome> {
  if (row.status === "awaiting_payment") {
    const won = await transitionOrder(deps.db, row.id, "paid", { ...paid, publishTo: deps });
    if (won) return { kind: "paid", order: won, now: true };
  }
  let current = (await findOrder(deps.db, row.id)) ?? row;
  if (current.status === "awaiting_payment") {
    await expireOrder(deps, saleId, row.id);
    current = (await findOrder(deps.db, row.id)) ?? current;
  }
  switch (current.status) {
    case "paid":
      return { kind: "paid", order: current, now: false };
    case "expired":
      return { kind: "expired", order: current };
    case "cancelled":
      return { kind: "cancelled", order: current };
    case "awaiting_payment":
      return { kind: "changed" };
  }
}

/**
 * Gives back a payment that arrived after its order expired or was cancelled: one refund whatever the
 * number of deliveries (the provider's refund is idempotent by order id, and nothing is asked once the
 * order shows the refund), recorded on the order, which keeps its final status. True for the call that
 * recorded it (where an `order.refunded` notice belongs).
 */
export async function refundLatePayment(
  deps: PaymentDeps,
  order: OrderRow,
  paid: { paymentRef: string; payment: Omit<OrderPayment, "status"> },
): Promise<boolean> {
  if (!deps.payments || (await isRefunded(deps.db, order.id))) return false;
  const refundRef = await deps.payments.refund(order.id, paid.paymentRef);
  const webhooks = await recordRefund(deps.db, order.id, { refundRef, ...paid });
  if (!webhooks) return false;
  console.warn(
    `order ${order.id}: paid after it was ${order.status}; refunded ${paid.payment.amountCents} ${paid.payment.currency} (${refundRef})`,
  );
  // written with the refund in one statement; a failed publish is left to the sweep
  await publishOutbox(deps, webhooks);
  return true;
}
