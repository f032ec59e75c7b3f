import type { LifecycleDeps } from "../services";
import type { QueuedOrder } from "../stock/queued-order";
import { restoreStock } from "../stock/restore";
import { publishOutbox } from "../webhooks/publish";
import { findOrder, findOrders, markRestored, transitionOrder, transitionOrders } from "./order-repository";
import type { OrderRow } from "./order-view";
import { writeAndAck } from "./order-write-job";
import { readQueuedOrder } from "./queued-order-store";

/**
 * Returns expired or cancelled orders' units to Redis (exactly once each, guarded by the ledger) and
 * records that in Postgres in one statement. Safe to call again; the sweeper does when Redis was
 * unreachable. Orders Redis cannot take back yet (its sale is being rebuilt) are left for later.
 */
export async function settleRestores(deps: LifecycleDeps, rows: OrderRow[]): Promise<void> {
  const settled: string[] = [];
  for (const row of rows) {
    if (row.restoredAt || (row.status !== "expired" && row.status !== "cancelled")) continue;
    const outcome = await restoreStock(
      deps.redis,
      { saleId: row.saleId, orderId: row.id, userId: row.userId, quantity: row.quantity },
      row.status,
      deps.now,
    );
    if (outcome.kind === "not_initialised") continue;
    // "not_reserved": a rebuilt Redis never counted this order, so there is nothing to give back.
    deps.memory.soldOut.clear(row.saleId);
    settled.push(row.id);
  }
  await markRestored(deps.db, settled);
}

/** {@link settleRestores} for one order. */
export function settleRestore(deps: LifecycleDeps, row: OrderRow): Promise<void> {
  return settleRestores(deps, [row]);
}

/**
 * The payment-timeout job for a batch: expires the orders still unpaid in one conditional update (by
 * Postgres's clock), restores their units, and finishes restores an earlier delivery left undone. A
 * timeout that arrives before the order write writes those orders first, from the job. Returns the
 * orders whose window is still open by the database's clock (`early`: deliver again later) and those
 * naming a sale that does not exist (`unknownSale`), which do not hold up the others.
 */
export async function expireOrders(
  deps: LifecycleDeps,
  batch: QueuedOrder[],
): Promise<{ expired: number; early: QueuedOrder[]; unknownSale: QueuedOrder[] }> {
  const ids = batch.map((o) => o.orderId);
  const won = await transitionOrders(deps.db, ids, "expired");
  await publishOutbox(deps, won.webhooks);
  const wonIds = new Set(won.map((r) => r.id));
  let others = await findOrders(
    deps.db,
    ids.filter((id) => !wonIds.has(id)),
  );
  const missing = batch.filter((o) => !wonIds.has(o.orderId) && !others.some((r) => r.id === o.orderId));
  let unknownSale: QueuedOrder[] = [];
  if (missing.length > 0) {
    ({ unknownSale } = await writeAndAck(deps, missing));
    const late = await transitionOrders(
      deps.db,
      missing.map((o) => o.orderId),
      "expired",
    );
    await publishOutbox(deps, late.webhooks);
    won.push(...late);
    for (const r of late) wonIds.add(r.id);
    others = await findOrders(
      deps.db,
      ids.filter((id) => !wonIds.has(id)),
    );
  }
  await settleRestores(deps, [...won, ...others]);
  const stillOpen = new Set(others.filter((r) => r.status === "awaiting_payment").map((r) => r.id));
  return { expired: won.length, early: batch.filter((o) => stillOpen.has(o.orderId)), unknownSale };
}

/** One order's payment timeout: "early" while the database says its window is still open. */
export async function expireOrder(
  deps: LifecycleDeps,
  saleId: string,
  orderId: string,
  queued?: QueuedOrder | null,
): Promise<"expired" | "final" | "early" | "unknown"> {
  const doc = queued ?? (await readQueuedOrder(deps.redis, saleId, orderId));
  if (!doc) {
    const won = await transitionOrder(deps.db, orderId, "expired", { publishTo: deps });
    const row = won ?? (await findOrder(deps.db, orderId));
    if (!row) return "unknown";
    if (row.status === "awaiting_payment") return "early";
    await settleRestore(deps, row);
    return won ? "expired" : "final";
  }
  const { expired, early } = await expireOrders(deps, [doc]);
  return early.length > 0 ? "early" : expired > 0 ? "expired" : "final";
}
