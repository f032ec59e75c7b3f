import type { Config } from "../env";
import { enqueueOrders } from "./enqueue-order";
import type { QueuedOrder } from "./order-view";

const WINDOW_MS = 5;
const MAX_ORDERS = 50;

type Batch = { orders: QueuedOrder[]; sent: Promise<void> };
let open: Batch | null = null;

/**
 * Publishes an order's jobs together with the other orders this isolate reserves within the next few
 * milliseconds: one write job and one payment-timeout job for the whole batch (during a rush an
 * isolate reserves many at once), so QStash messages, deliveries and Postgres statements are counted
 * per batch, not per order. The returned promise settles when the batch is sent; the caller hands
 * it to `waitUntil`. A batch that fails is not retried here: the outbox sweeper republishes its orders.
 */
export function publishSoon(config: Config, order: QueuedOrder): Promise<void> {
  if (!open) {
    const batch: Batch = { orders: [], sent: Promise.resolve() };
    batch.sent = new Promise<void>((resolve) => setTimeout(resolve, WINDOW_MS)).then(() => {
      if (open === batch) open = null;
      return enqueueOrders(config, batch.orders);
    });
    open = batch;
  }
  const batch = open;
  batch.orders.push(order);
  if (batch.orders.length >= MAX_ORDERS) open = null;
  return batch.sent;
}
