import { materializeOrder } from "../orders/order-write-job";
import type { PaymentDeps } from "../services";
import { saleForPayment } from "./payment-repository";
import { markOrderPaid, type SettleOutcome } from "./payment-settlement";

/**
 * The shop's back end confirms it took an order's payment (`manual` provider, the operator token): the
 * order becomes paid through {@link markOrderPaid}, the same conditional update as every other way, for
 * price × quantity in CURRENCY. A still-queued order is written first; `unknown` when there is no such
 * order. Confirming a paid order again changes nothing.
 *
 * @example
 * const outcome = await confirmPayment(deps, saleId, orderId, "shop-payment-42");
 */
export async function confirmPayment(
  deps: PaymentDeps,
  saleId: string,
  orderId: string,
  paymentRef: string | null,
): Promise<SettleOutcome | { kind: "unknown" }> {
  const row = await materializeOrder(deps, saleId, orderId);
  const sale = row ? await saleForPayment(deps.db, row.saleId) : null;
  if (!row || !sale) return { kind: "unknown" };
  return markOrderPaid(deps, saleId, row, {
    paymentRef: paymentRef ?? `manual-${orderId}`,
    payment: {
      provider: "manual",
      status: "paid",
      amountCents: sale.priceCents * row.quantity,
      currency: deps.config.CURRENCY,
    },
  });
}
