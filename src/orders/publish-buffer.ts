import { enqueueOrders, type PublishDeps } from "./enqueue-order";
import type { QueuedOrder } from "./order-view";

const WINDOW_MS = 5;
const MAX_ORDERS = 50;

type Batch = { orders: QueuedOrder[] };
let open: Batch | null = null;

/**
 * Publishes an order's jobs together with the other orders this isolate reserves within the next few
 * milliseconds: one write job and one payment-timeout job for the whole batch (during a rush an
 * isolate reserves many at once), so QStash messages, deliveries and Postgres statements are counted
 * per batch, not per order.
 *
 * The batch is owned by the request that opened it: the returned promise, which the caller hands to
 * its `waitUntil`, waits out the window and sends the batch with that request's I/O. A request that
 * joins an open batch only adds its order and gets a settled promise: no request waits on another
 * request's I/O (workerd cancels such requests). A batch that fails is not retried here: the outbox
 * sweeper republishes its orders, whichever request's they were.
 */
export function publishSoon(deps: PublishDeps, order: QueuedOrder): Promise<void> {
  if (open) {
    open.orders.push(order);
    if (open.orders.length >= MAX_ORDERS) open = null;
    return Promise.resolve();
  }
  const batch: Batch = { orders: [order] };
  open = batch;
  return new Promise<void>((resolve) => setTimeout(resolve, WINDOW_MS)).then(() => {
    if (open === batch) open = null;
    return enqueueOrders(deps, batch.orders);
  });
}
