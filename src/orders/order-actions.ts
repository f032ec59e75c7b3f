import type { LifecycleDeps } from "../services";
import { markCancelled, markPaid, materializeOrder, settleRestore } from "./order-lifecycle";
import type { CancelOutcome, PayOutcome } from "./order-outcome";
import { findOrder } from "./order-repository";
import type { OrderRow } from "./order-view";
import { readQueuedOrder } from "./queued-order-store";

/**
 * Pays an order the shopper owns (a still-queued one is written first). Paying a paid order again is
 * `paid` with nothing changed; an order whose window closed by the database's clock is expired here.
 *
 * @example
 * const outcome = await payOrder(deps, saleId, orderId, userId, "pi_3Pq2x");
 * if (outcome.kind === "paid") return rowView(outcome.order);
 */
export async function payOrder(
  deps: LifecycleDeps,
  saleId: string,
  orderId: string,
  userId: string,
  paymentRef: string | null,
): Promise<PayOutcome> {
  const row = await ownedRow(deps, saleId, orderId, userId);
  if (!row) return { kind: "unknown" };
  const { order } = await markPaid(deps, row, { userId, ...(paymentRef ? { paymentRef } : {}) });
  switch (order.status) {
    case "paid":
      return { kind: "paid", order };
    case "cancelled":
      return { kind: "cancelled" };
    case "expired":
    case "awaiting_payment":
      return { kind: "expired" };
  }
}

/**
 * Cancels an order the shopper owns while it is queued or awaiting payment; units come back at once.
 *
 * @example
 * const outcome = await cancelOrder(deps, saleId, orderId, userId);
 * if (outcome.kind !== "cancelled") throw orderRefusal(outcome); // at the edge
 */
export async function cancelOrder(
  deps: LifecycleDeps,
  saleId: string,
  orderId: string,
  userId: string,
): Promise<CancelOutcome> {
  const row = await ownedRow(deps, saleId, orderId, userId);
  if (!row) return { kind: "unknown" };
  const current =
    (row.status === "awaiting_payment"
      ? await markCancelled(deps, orderId, userId)
      : await findOrder(deps.db, orderId, userId)) ?? row;
  switch (current.status) {
    case "cancelled":
      await settleRestore(deps, current).catch(() => {});
      return { kind: "cancelled", order: current };
    case "paid":
      return { kind: "paid" };
    case "expired":
      return { kind: "expired" };
    case "awaiting_payment":
      return { kind: "changed" };
  }
}

/** The order's row (written first if it is still queued), or null when it is not this shopper's. */
export async function ownedRow(
  deps: LifecycleDeps,
  saleId: string,
  orderId: string,
  userId: string,
): Promise<OrderRow | null> {
  const queued = await readQueuedOrder(deps.redis, saleId, orderId);
  if (queued && queued.userId !== userId) return null;
  const row = await materializeOrder(deps, saleId, orderId, queued);
  return row && row.userId === userId ? row : null;
}
