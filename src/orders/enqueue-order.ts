import type { Config } from "../env";
import { StoreUnavailableError } from "../errors";
import { jobUrl } from "../job-paths";
import type { PublishDeps } from "../services";
import type { QueuedOrder } from "../stock/queued-order";
import type { VoidRequest } from "../stock/void";

const JOB_RETRIES = 5;

/** A job's body: the orders it is about (one, or the batch an isolate reserved within a few ms). */
export type OrderJobBody = { orders: QueuedOrder[] };

type Job = {
  url: string;
  body: OrderJobBody;
  deduplicationId: string;
  retries: number;
  failureCallback: string;
  notBefore?: number;
};

/**
 * The orders of a batch grouped by the second their payment window closes (rounded up), earliest
 * first: a batch can mix sales with different windows, and no order's timeout may wait for another's.
 * A rush on one sale fills a 5 ms batch whose orders close within the same second or two; orders whose
 * window has already closed (a sweeper's republish) share one group, due now.
 */
export function byExpirySecond(
  orders: QueuedOrder[],
  now = Date.now(),
): { notBefore: number; orders: QueuedOrder[] }[] {
  const groups = new Map<number, QueuedOrder[]>();
  const nowSecond = Math.ceil(now / 1000);
  for (const order of orders) {
    const second = Math.max(nowSecond, Math.ceil(order.expiresAt / 1000));
    groups.set(second, [...(groups.get(second) ?? []), order]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a - b)
    .map(([notBefore, group]) => ({ notBefore, orders: group }));
}

/**
 * The jobs for a batch of reservations: one order write (now) and one payment timeout per second in
 * which some of its orders expire (not before that second). Deduplication ids derive from the orders
 * (the first id and the count), so publishing the same batch again within QStash's deduplication window
 * is a no-op; `generation` lets the sweeper publish a fresh copy when an earlier one was dead-lettered.
 */
function orderJobs(
  config: Config,
  orders: QueuedOrder[],
  opts: { generation?: string; withTimeout?: boolean },
): Job[] {
  const idOf = (group: QueuedOrder[]) => {
    const first = group[0] as QueuedOrder;
    return `${first.orderId}${group.length > 1 ? `.${group.length}` : ""}${opts.generation ? `-${opts.generation}` : ""}`;
  };
  if (orders.length === 0) return [];
  const failureCallback = jobUrl(config.PUBLIC_URL, "failed");
  const jobs: Job[] = [
    {
      url: jobUrl(config.PUBLIC_URL, "orderWrite"),
      body: { orders },
      deduplicationId: `write-${idOf(orders)}`,
      retries: JOB_RETRIES,
      failureCallback,
    },
  ];
  if (opts.withTimeout === false) return jobs;
  for (const group of byExpirySecond(orders)) {
    jobs.push({
      url: jobUrl(config.PUBLIC_URL, "paymentTimeout"),
      body: { orders: group.orders },
      deduplicationId: `timeout-${idOf(group.orders)}`,
      retries: JOB_RETRIES,
      failureCallback,
      notBefore: group.notBefore,
    });
  }
  return jobs;
}

/**
 * Publishes the write and payment-timeout jobs for a batch of orders in one QStash batch call: one
 * write message, and one timeout message per second of expiry (two messages for a one-sale rush batch).
 */
export async function enqueueOrders(
  { config, qstash }: PublishDeps,
  orders: QueuedOrder[],
  opts: { generation?: string; withTimeout?: boolean } = {},
): Promise<void> {
  if (orders.length === 0) return;
  try {
    await qstash.batchJSON(orderJobs(config, orders, opts));
  } catch (error) {
    throw new StoreUnavailableError("qstash", error);
  }
}

/** Seconds before the first delivery of a void: long enough for a run held in the REST layer to land. */
const VOID_DELAY_SECONDS = 5;

/**
 * Hands the void of an unanswered buy attempt to QStash (src/buy/void-attempt.ts): delivered a few
 * seconds later to `/api/jobs/void-reservation`, retried while the stores are down, one per order id.
 */
export async function enqueueVoid({ config, qstash }: PublishDeps, req: VoidRequest): Promise<void> {
  try {
    await qstash.publishJSON({
      url: jobUrl(config.PUBLIC_URL, "voidReservation"),
      body: req,
      delay: VOID_DELAY_SECONDS,
      deduplicationId: `void-${req.orderId}`,
      retries: JOB_RETRIES,
      failureCallback: jobUrl(config.PUBLIC_URL, "failed"),
    });
  } catch (error) {
    throw new StoreUnavailableError("qstash", error);
  }
}
