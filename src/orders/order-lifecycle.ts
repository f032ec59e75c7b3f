import type { Deps } from "../context";
import { ApiError } from "../errors";
import { restoreStock } from "../sale/restore-stock";
import { soldOutCache } from "../sale/sold-out-cache";
import { findOrder, markRestored, transitionOrder } from "./order-repository";
import type { OrderRow, QueuedOrder } from "./order-view";
import { materializeOrder } from "./order-write-job";
import { readQueuedOrder } from "./queued-order-store";

export type LifecycleDeps = Pick<Deps, "redis" | "db" | "now" | "config">;

/**
 * Returns an expired or cancelled order's units to Redis (exactly once, guarded by the ledger) and
 * records that in Postgres. Safe to call again; the sweeper does when Redis was unreachable.
 */
export async function settleRestore(deps: LifecycleDeps, row: OrderRow): Promise<void> {
  if (row.restoredAt || (row.status !== "expired" && row.status !== "cancelled")) return;
  const outcome = await restoreStock(
    deps.redis,
    { saleId: row.saleId, orderId: row.id, userId: row.userId, quantity: row.quantity },
    row.status,
    deps.now,
  );
  if (outcome.kind === "not_initialised") return;
  // "not_reserved": a rebuilt Redis never counted this order, so there is nothing to give back.
  soldOutCache.clear(row.saleId);
  await markRestored(deps.db, row.id);
}

/** Pays an order the shopper owns. Paying a paid order again is a no-op that answers the same. */
export async function payOrder(
  deps: LifecycleDeps,
  saleId: string,
  orderId: string,
  userId: string,
  paymentRef: string | null,
): Promise<OrderRow> {
  const row = await ownedRow(deps, saleId, orderId, userId);
  if (row.status === "awaiting_payment") {
    const won = await transitionOrder(deps.db, orderId, "paid", {
      userId,
      ...(paymentRef ? { paymentRef } : {}),
    });
    if (won) return won;
  }
  const current = (await findOrder(deps.db, orderId, userId)) ?? row;
  switch (current.status) {
    case "paid":
      return current;
    case "cancelled":
      throw new ApiError("ORDER_CANCELLED", "This order was cancelled.");
    case "expired":
      throw new ApiError("ORDER_EXPIRED", "The payment window for this order has closed.");
    case "awaiting_payment": {
      await expireOrder(deps, saleId, orderId);
      throw new ApiError("ORDER_EXPIRED", "The payment window for this order has closed.");
    }
  }
}

/** Cancels an order the shopper owns while it is queued or awaiting payment; units come back at once. */
export async function cancelOrder(
  deps: LifecycleDeps,
  saleId: string,
  orderId: string,
  userId: string,
): Promise<OrderRow> {
  const row = await ownedRow(deps, saleId, orderId, userId);
  const won =
    row.status === "awaiting_payment"
      ? await transitionOrder(deps.db, orderId, "cancelled", { userId })
      : null;
  const current = won ?? (await findOrder(deps.db, orderId, userId)) ?? row;
  switch (current.status) {
    case "cancelled":
      await settleRestore(deps, current).catch(() => {});
      return current;
    case "paid":
      throw new ApiError("ORDER_PAID", "This order is paid and can no longer be cancelled.");
    case "expired":
      throw new ApiError("ORDER_EXPIRED", "This order already expired; its units went back to the sale.");
    case "awaiting_payment":
      throw new ApiError("CONFLICT", "The order changed while cancelling; try again.");
  }
}

/**
 * The payment-timeout job: expires the order if still unpaid (one conditional update, tried first: the
 * common case costs one statement) and restores its units. A timeout that arrives before the order
 * write writes the order first, from the job. Returns "early" when the database clock says the
 * window is still open.
 */
export async function expireOrder(
  deps: LifecycleDeps,
  saleId: string,
  orderId: string,
  queued?: QueuedOrder | null,
): Promise<"expired" | "final" | "early" | "unknown"> {
  let won = await transitionOrder(deps.db, orderId, "expired");
  let current = won ?? (await findOrder(deps.db, orderId));
  if (!current) {
    current = await materializeOrder(deps, saleId, orderId, queued);
    if (!current) return "unknown";
    won = current.status === "awaiting_payment" ? await transitionOrder(deps.db, orderId, "expired") : null;
    current = won ?? (await findOrder(deps.db, orderId)) ?? current;
  }
  if (current.status === "awaiting_payment") return "early";
  await settleRestore(deps, current);
  return won ? "expired" : "final";
}

async function ownedRow(
  deps: LifecycleDeps,
  saleId: string,
  orderId: string,
  userId: string,
): Promise<OrderRow> {
  const queued = await readQueuedOrder(deps.redis, saleId, orderId);
  if (queued && queued.userId !== userId) throw unknownOrder();
  const row = await materializeOrder(deps, saleId, orderId, queued);
  if (!row || row.userId !== userId) throw unknownOrder();
  return row;
}

export function unknownOrder(): ApiError {
  return new ApiError("UNKNOWN_ORDER", "No such order.");
}
