import type { AuditActor } from "../db/audit-log";
import { markPaid, materializeOrder } from "../orders/order-lifecycle";
import type { OrderRow } from "../orders/order-view";
import type { PaymentDeps } from "../services";
import { saleForPayment } from "./payment-repository";

/** What confirming a payment came to: the order paid (now or before), or closed before the money came. */
export type ConfirmOutcome =
  | { kind: "paid"; order: OrderRow }
  | { kind: "expired" }
  | { kind: "cancelled" }
  | { kind: "changed" }
  | { kind: "unknown" };

/**
 * The shop's back end confirms it took an order's payment (`manual` provider, the operator token): the
 * order becomes paid through the order lifecycle's paid step (src/orders/order-lifecycle.ts `markPaid`),
 * the same conditional update as every other way, for price × quantity in CURRENCY; an order whose
 * window closed by the database's clock is expired there instead. A still-queued order is written
 * first; `unknown` when there is no such order. Confirming a paid order again changes nothing. With
 * the operator (`actor`), the audit entry `order.payment` is written by the statement that pays it.
 *
 * @example
 * const outcome = await confirmPayment(deps, saleId, orderId, "shop-payment-42");
 */
export async function confirmPayment(
  deps: PaymentDeps,
  saleId: string,
  orderId: string,
  paymentRef: string | null,
  actor?: AuditActor,
): Promise<ConfirmOutcome> {
  const row = await materializeOrder(deps, saleId, orderId);
  const sale = row ? await saleForPayment(deps.db, row.saleId) : null;
  if (!row || !sale) return { kind: "unknown" };
  const ref = paymentRef ?? `manual-${orderId}`;
  const { order } = await markPaid(deps, row, {
    paymentRef: ref,
    payment: {
      provider: "manual",
      status: "paid",
      amountCents: row.amountCents,
      currency: deps.config.CURRENCY,
    },
    ...(actor && {
      audit: {
        ...actor,
        action: "order.payment",
        saleId: row.saleId,
        target: row.id,
        before: { status: "awaiting_payment" },
        after: { status: "paid", paymentRef: ref },
      },
    }),
  });
  switch (order.status) {
    case "paid":
      return { kind: "paid", order };
    case "expired":
    case "cancelled":
      return { kind: order.status };
    case "awaiting_payment":
      return { kind: "changed" };
  }
}
