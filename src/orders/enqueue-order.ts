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

function qstash(config: Config): Client {
  return new Client({
    token: config.QSTASH_TOKEN,
    ...(config.QSTASH_URL ? { baseUrl: config.QSTASH_URL } : {}),
    retry: { retries: 2, backoff: (n) => 50 * 2 ** n },
  });
}

/**
 * Publishes a reservation's two jobs in one QStash batch call: the order write (now) and the payment
 * timeout (not before the order expires). Deduplication ids are the order id, so a republish by the
 * outbox sweeper within QStash's deduplication window is a no-op; `generation` lets the sweeper publish
 * a fresh copy of the write job when an earlier one was dead-lettered.
 */
export async function enqueueOrder(
  config: Config,
  order: QueuedOrder,
  opts: { generation?: string; withTimeout?: boolean } = {},
): Promise<void> {
  const suffix = opts.generation ? `-${opts.generation}` : "";
  const failureCallback = `${config.PUBLIC_URL}${jobPaths.failed}`;
  const jobs = [
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
    } as (typeof jobs)[number]);
  }
  try {
    await qstash(config).batchJSON(jobs);
  } catch (error) {
    throw new StoreUnavailableError("qstash", error);
  }
}
