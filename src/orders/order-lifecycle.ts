import type { Deps } from "../context";
import { ApiError, StoreUnavailableError } from "../errors";
import { debitStock } from "../sale/debit-stock";
import { restoreStock } from "../sale/restore-stock";
import { soldOutCache } from "../sale/sold-out-cache";
import { findOrder, markCounted, markRestored, transitionOrder, writeOrders } from "./order-repository";
import type { OrderRow, QueuedOrder } from "./order-view";
import { ackQueuedOrders, readQueuedOrder } from "./queued-order-store";

type LifecycleDeps = Pick<Deps, "redis" | "db" | "now" | "config">;

/**
 * The order-write job's work, for a batch of orders: the rows in Postgres in one statement (duplicates
 * are no-ops); then, in one script call per sale, Redis is made sure to count every live order of the
 * batch (a no-op when its reservation entry is there, a debit when a lost or lagging Redis never saw
 * it); then the outbox entries are acknowledged in one pipeline. Returns how many rows were inserted.
 */
export async function writeAndAck(deps: LifecycleDeps, batch: QueuedOrder[]): Promise<number> {
  const written = await writeOrders(deps.db, batch);
  let inserted = 0;
  const toCount = new Map<string, { epoch: number; orders: QueuedOrder[]; behind: QueuedOrder[] }>();
  const retentionMs = deps.config.LEDGER_TRIM_AFTER_SECONDS * 1000;
  for (const order of batch) {
    const result = written.get(order.orderId);
    if (!result)
      throw new ApiError("INVALID_REQUEST", `Order ${order.orderId} names a sale that does not exist.`);
    if (result.inserted) inserted++;
    const live = result.status === "awaiting_payment" || result.status === "paid";
    const behind = result.orderEpoch < result.saleEpoch;
    // a ledger entry older than the retention may have been trimmed: its absence would prove nothing
    if (!live || (!behind && deps.now - order.createdAt >= retentionMs)) continue;
    const group = toCount.get(order.saleId) ?? { epoch: result.saleEpoch, orders: [], behind: [] };
    group.orders.push(order);
    if (behind) group.behind.push(order);
    toCount.set(order.saleId, group);
  }
  for (const [saleId, group] of toCount) await countInRedis(deps, saleId, group);
  await ackQueuedOrders(deps.redis, batch);
  return inserted;
}

/**
 * Counts orders in the sale's current Redis (debit-stock.lua), then records in Postgres that those of
 * an older epoch are counted in this one. Until the sale's Redis state exists the write answers 503 and
 * QStash tries again.
 */
async function countInRedis(
  deps: LifecycleDeps,
  saleId: string,
  group: { epoch: number; orders: QueuedOrder[]; behind: QueuedOrder[] },
): Promise<void> {
  const outcome = await debitStock(deps.redis, saleId, group.orders, group.epoch, deps.now);
  if (outcome.kind === "not_ready") {
    throw new StoreUnavailableError(
      "redis",
      new Error(`sale ${saleId} epoch ${group.epoch} not in Redis yet`),
    );
  }
  if (outcome.debited > 0) {
    console.warn(
      `sale ${saleId}: ${outcome.debited} order(s) Redis had lost counted again; remaining ${outcome.remaining}`,
    );
  }
  if (outcome.remaining < 0)
    console.error(`sale ${saleId}: remaining ${outcome.remaining} after a Redis loss`);
  for (const order of group.behind) await markCounted(deps.db, order.orderId, group.epoch);
}

/**
 * Makes sure an order has its Postgres row, written on demand when a shopper pays or cancels a
 * still-queued order or a timeout arrives first. Idempotent.
 */
export async function materializeOrder(
  deps: LifecycleDeps,
  saleId: string,
  orderId: string,
  queued?: QueuedOrder | null,
): Promise<OrderRow | null> {
  const doc = queued ?? (await readQueuedOrder(deps.redis, saleId, orderId));
  if (doc) await writeAndAck(deps, [doc]);
  return findOrder(deps.db, orderId);
}

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
