import { ApiError, StoreUnavailableError } from "../errors";
import { debitStock } from "../sale/debit-stock";
import type { LifecycleDeps } from "./order-lifecycle";
import { findOrder } from "./order-repository";
import type { OrderRow, QueuedOrder } from "./order-view";
import { markCounted, writeOrders } from "./order-writes";
import { ackQueuedOrders, readQueuedOrder } from "./queued-order-store";

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
