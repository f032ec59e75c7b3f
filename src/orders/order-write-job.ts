import { StoreUnavailableError } from "../errors";
import type { Deps, InlineDeliveryDeps, LifecycleDeps } from "../services";
import { debitStock } from "../stock/debit";
import type { QueuedOrder } from "../stock/queued-order";
import { deliverInline } from "../webhooks/deliver-inline";
import { publishOutbox } from "../webhooks/publish";
import { announceSoldOut } from "../webhooks/sale-status";
import { markCounted, writeOrders } from "./order-writes";
import { ackQueuedOrders } from "./queued-order-store";

/** What an order-write did: rows inserted, and the orders left out because their sale does not exist. */
export type WriteReport = { inserted: number; unknownSale: QueuedOrder[] };

/**
 * The order-write job's work, for a batch of orders, each with its own outcome: the rows in Postgres in
 * one statement (duplicates are no-ops; an order naming no existing sale is left out and reported);
 * then, in one script call per sale, Redis is made sure to count every live order of the batch (a no-op
 * when its reservation entry is there, a debit when a lost or lagging Redis never saw it); then the
 * outbox entries are acknowledged in one pipeline. The webhook events the write produced (reserved,
 * awaiting payment), when an endpoint subscribes to them, are published in one QStash call, or, given
 * `inline` (the order-write job), delivered from this process in the background without a QStash hop
 * (src/webhooks/deliver-inline.ts: what an endpoint does not take goes to QStash then); a sale the
 * batch left with no units is announced sold out at once (not only by the minute sweep). A sale whose Redis state is not there yet keeps only
 * its own orders unacknowledged: the others are acknowledged, then the job answers 503 to be retried.
 */
export async function writeAndAck(
  deps: LifecycleDeps,
  batch: QueuedOrder[],
  inline?: InlineDeliveryDeps & Pick<Deps, "defer">,
): Promise<WriteReport> {
  const { written, webhooks } = await writeOrders(deps.db, batch);
  if (!inline) await publishOutbox(deps, webhooks);
  try {
    return await countAndAck(deps, batch, written);
  } finally {
    // after the job's own Redis calls, which would otherwise wait behind the POSTs (Workers: 6 connections)
    if (inline && webhooks.length > 0) inline.defer(deliverInline(inline, webhooks));
  }
}

/** The order write's Redis side: every live order counted in the sale's current epoch, then acknowledged. */
async function countAndAck(
  deps: LifecycleDeps,
  batch: QueuedOrder[],
  written: Awaited<ReturnType<typeof writeOrders>>["written"],
): Promise<WriteReport> {
  const report: WriteReport = { inserted: 0, unknownSale: [] };
  const toCount = new Map<string, { epoch: number; orders: QueuedOrder[]; behind: QueuedOrder[] }>();
  const retentionMs = deps.config.LEDGER_TRIM_AFTER_SECONDS * 1000;
  for (const order of batch) {
    const result = written.get(order.orderId);
    if (!result) {
      report.unknownSale.push(order);
      continue;
    }
    if (result.inserted) report.inserted++;
    const live = result.status === "awaiting_payment" || result.status === "paid";
    const behind = result.orderEpoch < result.saleEpoch;
    // a ledger entry older than the retention may have been trimmed: its absence would prove nothing
    if (!live || (!behind && deps.now - order.createdAt >= retentionMs)) continue;
    const group = toCount.get(order.saleId) ?? { epoch: result.saleEpoch, orders: [], behind: [] };
    group.orders.push(order);
    if (behind) group.behind.push(order);
    toCount.set(order.saleId, group);
  }
  if (report.unknownSale.length > 0)
    console.warn(
      `order write: ${report.unknownSale.length} order(s) not written: their sale does not exist, or a drop's order has no lines`,
    );
  const notReady = new Set<string>();
  const soldOut: string[] = [];
  for (const [saleId, group] of toCount) {
    const remaining = await countInRedis(deps, saleId, group);
    if (remaining === null) notReady.add(saleId);
    else if (remaining <= 0) soldOut.push(saleId);
  }
  await ackQueuedOrders(
    deps.redis,
    batch.filter((o) => written.has(o.orderId) && !notReady.has(o.saleId)),
  );
  await announceSoldOut(deps, soldOut);
  if (notReady.size > 0) {
    throw new StoreUnavailableError(
      "redis",
      new Error(`sale(s) ${[...notReady].join(", ")} not in Redis (at the current epoch) yet`),
    );
  }
  return report;
}

/**
 * Counts orders in the sale's current Redis (debit-stock.lua), then records in Postgres that those of
 * an older epoch are counted in this one. Returns the units the sale has left; null while the sale's
 * Redis state for that epoch is not there (being rebuilt): the caller answers 503 and QStash tries again.
 */
async function countInRedis(
  deps: LifecycleDeps,
  saleId: string,
  group: { epoch: number; orders: QueuedOrder[]; behind: QueuedOrder[] },
): Promise<number | null> {
  const outcome = await debitStock(deps.redis, saleId, group.orders, group.epoch, deps.now);
  if (outcome.kind === "not_ready") return null;
  if (outcome.debited > 0) {
    console.warn(
      `sale ${saleId}: ${outcome.debited} order(s) Redis had lost counted again; remaining ${outcome.remaining}`,
    );
  }
  if (outcome.remaining < 0)
    console.error(`sale ${saleId}: remaining ${outcome.remaining} after a Redis loss`);
  for (const order of group.behind) await markCounted(deps.db, order.orderId, group.epoch);
  return outcome.remaining;
}
