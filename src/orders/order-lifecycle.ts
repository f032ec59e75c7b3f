import type { LifecycleDeps } from "../services";
import type { QueuedOrder } from "../stock/queued-order";
import { restoreStock } from "../stock/restore";
import { publishOutbox } from "../webhooks/publish";
import {
  findOrder,
  findOrders,
  insertCancelled,
  markRestored,
  type TransitionOptions,
  transitionOrders,
} from "./order-repository";
import type { OrderRow } from "./order-view";
import { writeAndAck } from "./order-write-job";
import { readQueuedOrder } from "./queued-order-store";

/*
 * An order's life after its reservation, one function per step: written from its reservation
 * (materializeOrder), paid (markPaid), expired (expireOrder; expireOrders for a timeout job's batch),
 * cancelled (markCancelled), voided (voidOrder), and the units of an expired or cancelled order given
 * back (settleRestores). The repository decides each step in one conditional statement and returns the
 * webhook events that statement wrote; the step publishes them here (a failed publish is left to the
 * minute sweep).
 */

/**
 * Makes sure an order has its Postgres row, written from its reservation (the order-write job's work,
 * src/orders/order-write-job.ts) when a shopper pays or cancels a still-queued order. Idempotent.
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
 * Pays an order in Postgres while its window is open by the database's clock (the conditional update
 * that also decides expired and cancelled, so exactly one wins). When the payment lost, the order's
 * timeout is applied at once ({@link expireOrder}): an order whose window closed is expired here (its
 * units come back), so the answer is final. Returns the order as it stands and whether this call made
 * it paid (where an `order.paid` notice belongs); an order read in a final status is answered as read
 * (that status never changes).
 *
 * @example
 * const { order, now } = await markPaid(deps, row, { paymentRef: "pi_1", payment });
 */
export async function markPaid(
  deps: LifecycleDeps,
  row: OrderRow,
  paid: TransitionOptions,
): Promise<{ order: OrderRow; now: boolean }> {
  if (row.status !== "awaiting_payment") return { order: row, now: false };
  const { won, webhooks } = await transitionOrders(deps.db, [row.id], "paid", paid);
  await publishOutbox(deps, webhooks);
  if (won[0]) return { order: won[0], now: true };
  return { order: (await expireOrder(deps, row.id)) ?? row, now: false };
}

/**
 * One order's payment timeout, for an order in Postgres: expired when its window closed by the
 * database's clock, then its units given back (also when another path expired it first). Returns the
 * order as it stands (still `awaiting_payment` while its window is open), null when there is no such order.
 */
export async function expireOrder(deps: LifecycleDeps, orderId: string): Promise<OrderRow | null> {
  const { won, webhooks } = await transitionOrders(deps.db, [orderId], "expired");
  await publishOutbox(deps, webhooks);
  const row = won[0] ?? (await findOrder(deps.db, orderId));
  if (row && row.status !== "awaiting_payment") await settleRestore(deps, row);
  return row;
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
  const { won, webhooks } = await transitionOrders(deps.db, ids, "expired");
  await publishOutbox(deps, webhooks);
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
    won.push(...late.won);
    for (const r of late.won) wonIds.add(r.id);
    others = await findOrders(
      deps.db,
      ids.filter((id) => !wonIds.has(id)),
    );
  }
  await settleRestores(deps, [...won, ...others]);
  const stillOpen = new Set(others.filter((r) => r.status === "awaiting_payment").map((r) => r.id));
  return { expired: won.length, early: batch.filter((o) => stillOpen.has(o.orderId)), unknownSale };
}

/**
 * Cancels an order awaiting payment (only `userId`'s, when given), unless another step decided it
 * first. Returns the order as it stands, null when there is no such order; the units of a cancelled
 * order come back through {@link settleRestore}.
 */
export async function markCancelled(
  deps: LifecycleDeps,
  orderId: string,
  userId?: string,
): Promise<OrderRow | null> {
  const { won, webhooks } = await transitionOrders(
    deps.db,
    [orderId],
    "cancelled",
    userId === undefined ? {} : { userId },
  );
  await publishOutbox(deps, webhooks);
  return won[0] ?? (await findOrder(deps.db, orderId, userId));
}

/**
 * A reservation the void script gave back (src/buy/void-attempt.ts), recorded in Postgres as a
 * cancelled and restored order: inserted cancelled if no write reached Postgres yet (so a write still
 * in flight finds the row and changes nothing), cancelled through the conditional update if the
 * sweeper wrote it meanwhile; a paid order is left as it is.
 */
export async function voidOrder(deps: LifecycleDeps, order: QueuedOrder): Promise<void> {
  await insertCancelled(deps.db, order);
  const row = await markCancelled(deps, order.orderId);
  if (!row) return;
  if (row.status === "paid") {
    console.error(`voided reservation ${order.orderId} is paid in Postgres; left as it is`);
    return;
  }
  // the script wrote the "x:" entry: restore-stock.lua answers "already restored", Postgres records it
  await settleRestore(deps, row);
}

/**
 * Returns expired or cancelled orders' units to Redis (exactly once each, guarded by the ledger; a
 * drop's per variant, from the lines its reservation entry recorded, else the row's) and records that
 * in Postgres in one statement. Safe to call again; the sweeper does when Redis was unreachable. Orders
 * Redis cannot take back yet (its sale is being rebuilt) are left for later.
 */
export async function settleRestores(deps: LifecycleDeps, rows: OrderRow[]): Promise<void> {
  const settled: string[] = [];
  for (const row of rows) {
    if (row.restoredAt || (row.status !== "expired" && row.status !== "cancelled")) continue;
    const outcome = await restoreStock(
      deps.redis,
      { saleId: row.saleId, orderId: row.id, userId: row.userId, quantity: row.quantity, items: row.items },
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
