import { Hono } from "hono";
import { type AppEnv, deps } from "../context";
import { readConfig } from "../env";
import { ApiError } from "../errors";
import { saleIdOfOrder } from "../ids";
import { qstashSignature } from "../middleware/qstash-signature";
import { type FailureCallback, recordDeadLetter } from "../orders/dead-letters";
import { expireOrder, writeAndAck } from "../orders/order-lifecycle";
import type { QueuedOrder } from "../orders/order-view";

/** A job body: the queued order as the buy route published it. */
function parseJob(body: string): QueuedOrder {
  let job: Partial<QueuedOrder>;
  try {
    job = JSON.parse(body) as Partial<QueuedOrder>;
  } catch {
    throw new ApiError("INVALID_REQUEST", "Job body is not JSON.");
  }
  const saleId = typeof job.orderId === "string" ? saleIdOfOrder(job.orderId) : null;
  if (!saleId || saleId !== job.saleId || typeof job.userId !== "string" || !Number.isInteger(job.quantity)) {
    throw new ApiError("INVALID_REQUEST", "Job body is not an order.");
  }
  return {
    orderId: String(job.orderId),
    saleId,
    userId: job.userId,
    quantity: Number(job.quantity),
    createdAt: Number(job.createdAt),
    expiresAt: Number(job.expiresAt),
    epoch: Number.isInteger(job.epoch) ? Number(job.epoch) : 1,
  };
}

/**
 * QStash job endpoints. Every delivery is verified (401 and nothing written otherwise) and every
 * handler is idempotent: deliveries are at least once, possibly duplicated and out of order. A store
 * that is down answers 503 with Retry-After, which QStash honours when it retries.
 */
export const jobRoutes = new Hono<AppEnv>()
  .use(
    qstashSignature({
      keys: (c) => {
        const config = readConfig(c.env);
        return { current: config.QSTASH_CURRENT_SIGNING_KEY, next: config.QSTASH_NEXT_SIGNING_KEY };
      },
    }),
  )
  .post("/order-write", async (c) => {
    const order = parseJob(c.get("jobBody"));
    const inserted = await writeAndAck(deps(c), order);
    return c.json({ orderId: order.orderId, inserted });
  })
  .post("/payment-timeout", async (c) => {
    const order = parseJob(c.get("jobBody"));
    const d = deps(c);
    const result = await expireOrder(d, order.saleId, order.orderId, order);
    if (result === "early") {
      const wait = Math.max(1, Math.ceil((order.expiresAt - d.now) / 1000));
      throw new ApiError("ORDER_NOT_READY", "The payment window is still open.", { retryAfterSeconds: wait });
    }
    return c.json({ orderId: order.orderId, result });
  })
  .post("/failed", async (c) => {
    let failure: FailureCallback = {};
    try {
      failure = JSON.parse(c.get("jobBody")) as FailureCallback;
    } catch {
      failure = {};
    }
    await recordDeadLetter(deps(c).db, failure, c.req.header("Upstash-Message-Id") ?? crypto.randomUUID());
    return c.json({ recorded: true });
  });
