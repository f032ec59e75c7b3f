import { variantsOf } from "../catalog/sale-variants";
import { eventData } from "../memory/frame";
import type { Memory } from "../memory/memory";
import type { OrderReadDeps } from "../services";
import { findOrder } from "./order-repository";
import { type OrderView, queuedView, rowView } from "./order-view";
import { readQueuedOrder } from "./queued-order-store";

/** Statuses an order never leaves. */
const FINAL_STATUSES: ReadonlySet<string> = new Set(["paid", "expired", "cancelled"]);

/** An order as the process knows it: its owner and the contract's `Order`. */
export type KnownOrder = { userId: string; view: OrderView };

/** What reading an order for a shopper came to (another shopper's order is `unknown`, as a missing one). */
export type OrderRead = { kind: "found"; view: OrderView } | { kind: "unknown" };

const UNKNOWN: OrderRead = { kind: "unknown" };

/**
 * The shopper's order, answered from what the process knows when it can: an order it saw in a final
 * status (it never changes), or one its order feed read for a stream within the feed's two last
 * intervals (the age a stream's watcher sees too); else the queued document in Redis (one HGET), else
 * the Postgres row (one query), remembered when final.
 *
 * @example
 * const read = await readOwnOrder(deps, saleId, orderId, userId);
 * if (read.kind === "unknown") throw unknownOrder(); // the route's answer
 */
export async function readOwnOrder(
  d: OrderReadDeps,
  saleId: string,
  orderId: string,
  userId: string,
): Promise<OrderRead> {
  const known = knownOrder(d.memory, orderId, d.now);
  if (known) return known.userId === userId ? { kind: "found", view: known.view } : UNKNOWN;
  const queued = await readQueuedOrder(d.redis, saleId, orderId);
  if (queued)
    return queued.userId === userId
      ? { kind: "found", view: queuedView(queued, await variantsOf(d, saleId)) }
      : UNKNOWN;
  const row = await findOrder(d.db, orderId, userId);
  if (!row) return UNKNOWN;
  const view = rowView(row);
  rememberOrder(d.memory, row.userId, view);
  return { kind: "found", view };
}

/** What the process knows of an order without asking a store, or undefined. */
export function knownOrder(
  memory: Pick<Memory, "finalOrders" | "feeds">,
  orderId: string,
  now: number,
): KnownOrder | undefined {
  const final = memory.finalOrders.get(orderId);
  if (final) return final;
  const fed = memory.feeds.orders.getFresh(orderId, now);
  const event = fed?.frame.events[0];
  if (!fed || !event) return undefined;
  const view = JSON.parse(eventData(event)) as OrderView;
  rememberOrder(memory, fed.userId, view);
  return { userId: fed.userId, view };
}

/**
 * Keeps an order the process saw in a state it never leaves (any other is left to the stores): paid, or
 * expired / cancelled unless a checkout is pending on it, since a payment that still lands there is
 * refunded and shown on the order (by whichever process handles it).
 */
export function rememberOrder(memory: Pick<Memory, "finalOrders">, userId: string, view: OrderView): void {
  if (!FINAL_STATUSES.has(view.status)) return;
  if (view.status !== "paid" && view.payment?.status === "pending") return;
  memory.finalOrders.set(view.orderId, { userId, view });
}
