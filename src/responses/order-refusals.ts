import { ApiError } from "../http/api-error";
import { saleIdOfOrder } from "../ids";
import type { OrderRefusal } from "../orders/order-outcome";

/** 404 UNKNOWN_ORDER: no such order, or another shopper's (the same answer, so ids cannot be probed). */
export function unknownOrder(): ApiError {
  return new ApiError("UNKNOWN_ORDER", "No such order.");
}

/**
 * The sale an order id names, or 404 UNKNOWN_ORDER for an id that is not an order id.
 *
 * @example
 * const saleId = saleOfOrder(c.req.valid("param").orderId);
 */
export function saleOfOrder(orderId: string): string {
  const saleId = saleIdOfOrder(orderId);
  if (!saleId) throw unknownOrder();
  return saleId;
}

/**
 * The one table from a refused pay or cancel (orders/order-actions.ts) to the contract's error.
 *
 * @example
 * if (outcome.kind !== "paid") throw orderRefusal(outcome);
 */
export function orderRefusal(outcome: OrderRefusal): ApiError {
  switch (outcome.kind) {
    case "unknown":
      return unknownOrder();
    case "cancelled":
      return new ApiError("ORDER_CANCELLED", "This order was cancelled.");
    case "expired":
      return new ApiError(
        "ORDER_EXPIRED",
        "The payment window for this order has closed; its units went back to the sale.",
      );
    case "paid":
      return new ApiError("ORDER_PAID", "This order is paid and can no longer be cancelled.");
    case "changed":
      return new ApiError("CONFLICT", "The order changed while cancelling; try again.");
  }
}

/**
 * The one table from a refused checkout or payment confirmation to the contract's error (the order
 * routes' table, which names the same refusals).
 *
 * @example
 * if (outcome.kind !== "checkout") throw paymentRefusal(outcome);
 */
export function paymentRefusal(outcome: {
  kind: "unknown" | "paid" | "expired" | "cancelled" | "changed";
}): ApiError {
  if (outcome.kind === "paid") return new ApiError("ORDER_PAID", "This order is paid already.");
  return orderRefusal(outcome);
}
