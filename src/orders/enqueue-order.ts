import { Client } from "@upstash/qstash";
import type { Config } from "../env";
import { StoreUnavailableError } from "../errors";
import type { QueuedOrder } from "./order-view";

/** Job routes QStash delivers to (relative to PUBLIC_URL). */
export const jobPaths = {
  writeOrder: "/api/jobs/order-write",
  paymentTimeout: "/api/jobs/payment-timeout",
  failed: "/api/jobs/failed",
} as const;

const JOB_RETRIES = 5;

const clients = new Map<string, Client>();

/** The isolate's QStash client (one per token and URL). */
function qstash(config: Config): Client {
  const key = `${config.QSTASH_URL ?? ""} ${config.QSTASH_TOKEN}`;
  let client = clients.get(key);
  if (!client) {
    client = new Client({
      token: config.QSTASH_TOKEN,
      ...(config.QSTASH_URL ? { baseUrl: config.QSTASH_URL } : {}),
      retry: { retries: 2, backoff: (n) => 50 * 2 ** n },
    });
    clients.set(key, client);
  }
  return client;
}

type Job = {
  url: string;
  body: QueuedOrder;
  deduplicationId: string;
  retries: number;
  failureCallback: string;
  notBefore?: number;
};

/**
 * A reservation's two jobs: the order write (now) and the payment timeout (not before the order
 * expires). Deduplication ids are the order id, so a republish within QStash's deduplication window
 * is a no-op; `generation` lets the sweeper publish a fresh copy when an earlier one was dead-lettered.
 */
function orderJobs(
  config: Config,
  order: QueuedOrder,
  opts: { generation?: string; withTimeout?: boolean },
): Job[] {
  const suffix = opts.generation ? `-${opts.generation}` : "";
  const failureCallback = `${config.PUBLIC_URL}${jobPaths.failed}`;
  const jobs: Job[] = [
    {
      url: `${config.PUBLIC_URL}${jobPaths.writeOrder}`,
      body: order,
      deduplicationId: `write-${order.orderId}${suffix}`,
      retries: JOB_RETRIES,
      failureCallback,
    },
  ];
  if (opts.withTimeout !== false) {
    jobs.push({
      url: `${config.PUBLIC_URL}${jobPaths.paymentTimeout}`,
      body: order,
      deduplicationId: `timeout-${order.orderId}${suffix}`,
      retries: JOB_RETRIES,
      failureCallback,
      notBefore: Math.ceil(order.expiresAt / 1000),
    });
  }
  return jobs;
}

/** Publishes the jobs of one or more orders in one QStash batch call. */
export async function enqueueOrders(
  config: Config,
  orders: QueuedOrder[],
  opts: { generation?: string; withTimeout?: boolean } = {},
): Promise<void> {
  if (orders.length === 0) return;
  try {
    await qstash(config).batchJSON(orders.flatMap((order) => orderJobs(config, order, opts)));
  } catch (error) {
    throw new StoreUnavailableError("qstash", error);
  }
}

/** {@link enqueueOrders} for one order. */
export function enqueueOrder(
  config: Config,
  order: QueuedOrder,
  opts: { generation?: string; withTimeout?: boolean } = {},
): Promise<void> {
  return enqueueOrders(config, [order], opts);
}
