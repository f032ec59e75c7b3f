import { variantsOf } from "../catalog/sale-variants";
import type { Db } from "../db/client";
import { type Frame, frameOf, type WatchedOrder } from "../memory/frame";
import type { Memory } from "../memory/memory";
import { rememberOrder } from "../orders/order-reads";
import { findOrders } from "../orders/order-repository";
import { type OrderView, queuedView, rowView } from "../orders/order-view";
import { saleKeys } from "../stock/keys";
import { parseQueuedOrder } from "../stock/queued-order";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";

export const FINAL_ORDER_STATUSES: readonly string[] = ["paid", "expired", "cancelled"];

/** The order's frame if `userId` owns it; undefined for anyone else's order (or an unknown one). */
export function ownFrame(order: WatchedOrder | undefined, userId: string): Frame | undefined {
  return order && order.userId === userId ? order.frame : undefined;
}

/** An order as watched: its `order` event, serialized once. */
export function watchedOrder(view: OrderView, userId: string): WatchedOrder {
  const data = JSON.stringify(view);
  const final = FINAL_ORDER_STATUSES.includes(view.status);
  return { userId, frame: frameOf([{ event: "order", data, key: view.status }], final) };
}

/**
 * The given orders (id → sale id): the Postgres row once written, else the queued document the
 * reservation script left in Redis. Both read at once; the row wins, being the later state. Orders
 * found in neither are left out (the caller keeps what it had). Rows in a final status are remembered
 * (src/orders/order-reads.ts): a later read or stream opening of them needs no store.
 */
export async function readOrders(
  store: { redis: Redis; db: Db; memory: Pick<Memory, "finalOrders" | "saleVariants"> },
  orders: Map<string, string>,
): Promise<Map<string, WatchedOrder>> {
  const ids = [...orders.keys()];
  const pipe = store.redis.pipeline();
  for (const [orderId, saleId] of orders) pipe.hget(saleKeys(saleId).orders, orderId);
  const [docs, rows] = await Promise.all([
    withRedis(() => pipe.exec<(string | null)[]>()),
    findOrders(store.db, ids),
  ]);
  const found = new Map<string, WatchedOrder>();
  for (const [i, orderId] of ids.entries()) {
    const queued = parseQueuedOrder(orders.get(orderId) as string, docs[i] ?? null);
    if (queued)
      found.set(
        orderId,
        watchedOrder(queuedView(queued, await variantsOf(store, queued.saleId)), queued.userId),
      );
  }
  for (const row of rows) {
    const view = rowView(row);
    rememberOrder(store.memory, row.userId, view);
    found.set(row.id, watchedOrder(view, row.userId));
  }
  return found;
}

/**
 * One order for a stream that connects: from the process's final orders when it has it there (no store),
 * else read as the feed reads it.
 */
export async function readOneOrder(
  store: { redis: Redis; db: Db; memory: Pick<Memory, "finalOrders" | "saleVariants"> },
  orderId: string,
  saleId: string,
): Promise<WatchedOrder | undefined> {
  const final = store.memory.finalOrders.get(orderId);
  if (final) return watchedOrder(final.view, final.userId);
  return (await readOrders(store, new Map([[orderId, saleId]]))).get(orderId);
}
