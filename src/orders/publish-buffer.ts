import type { Memory } from "../memory/memory";
import type { PublishDeps } from "../services";
import type { QueuedOrder } from "../stock/queued-order";
import { enqueueOrders } from "./enqueue-order";

/**
 * How long a batch gathers orders. 20 ms (was 5): at a rush's few thousand buys a second a batch fills to
 * its 50 orders instead of about a dozen, so the QStash messages, their deliveries, the job route's
 * signature checks, the Postgres statements and the Redis acknowledgements per order drop about four
 * times. The shopper's answer never waits for it (the publish is background work).
 */
const WINDOW_MS = 20;
const MAX_ORDERS = 50;

/**
 * Publishes an order's jobs together with the other orders this isolate reserves within the next 20
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
export function publishSoon(deps: PublishDeps & { memory: Memory }, order: QueuedOrder): Promise<void> {
  const state = deps.memory.publishing;
  if (state.open) {
    state.open.orders.push(order);
    if (state.open.orders.length >= MAX_ORDERS) state.open = null;
    return Promise.resolve();
  }
  const batch = { orders: [order] };
  state.open = batch;
  return new Promise<void>((resolve) => setTimeout(resolve, WINDOW_MS)).then(() => {
    if (state.open === batch) state.open = null;
    return enqueueOrders(deps, batch.orders);
  });
}
