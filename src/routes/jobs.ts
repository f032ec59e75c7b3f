import { Hono } from "hono";
import { MAX_QUANTITY } from "../api/buy-schemas";
import { type AppEnv, configOf, deps } from "../context";
import { ApiError } from "../errors";
import { saleIdOfOrder } from "../ids";
import { qstashSignature } from "../middleware/qstash-signature";
import { type FailureCallback, recordDeadLetter } from "../orders/dead-letters";
import type { OrderJobBody } from "../orders/enqueue-order";
import { expireOrders } from "../orders/order-lifecycle";
import type { QueuedOrder } from "../orders/order-view";
import { writeAndAck } from "../orders/order-write-job";
import { voidAttempt } from "../orders/void-order";
import { parseIdempotencyKey } from "../sale/buy-request";
import type { VoidRequest } from "../sale/void-reservation";

/** The most orders one job carries: publishers batch at most 50 (publish buffer, sweeper, reconciliation). */
const MAX_ORDERS_PER_JOB = 50;
/**
 * The largest job body taken: 50 orders of at most about 1 KiB each (ids, numbers and a 128-character
 * user id, 6 bytes a character where JSON escapes it). A larger body is 413 before it is read.
 */
const MAX_JOB_BODY_BYTES = 64 * 1024;
/** A failure callback carries the job body in base64 (4/3 of it) and the answer QStash got. */
const MAX_FAILURE_BODY_BYTES = 4 * MAX_JOB_BODY_BYTES;

/** The QStash signature check for a route whose bodies are at most `maxBodyBytes`. */
function signed(maxBodyBytes: number) {
  return qstashSignature({
    maxBodyBytes,
    keys: (c) => {
      const config = configOf(c);
      return { current: config.QSTASH_CURRENT_SIGNING_KEY, next: config.QSTASH_NEXT_SIGNING_KEY };
    },
  });
}

/** Milliseconds since the epoch a Date can hold. */
const MAX_TIME = 8.64e15;

/** The fields every job entry shares: an order id naming its sale, a user id, a quantity in range. */
function namesAnOrder<
  T extends { orderId?: unknown; saleId?: unknown; userId?: unknown; quantity?: unknown },
>(job: T): job is T & { orderId: string; saleId: string; userId: string; quantity: number } {
  const saleId = typeof job.orderId === "string" ? saleIdOfOrder(job.orderId) : null;
  return (
    saleId !== null &&
    saleId === job.saleId &&
    typeof job.userId === "string" &&
    job.userId.length > 0 &&
    job.userId.length <= 128 &&
    Number.isInteger(job.quantity) &&
    Number(job.quantity) >= 1 &&
    Number(job.quantity) <= MAX_QUANTITY
  );
}

/** One order of a job body, checked (the order id must name the sale), or null when it is not one. */
function parseOrder(job: Partial<QueuedOrder>): QueuedOrder | null {
  const validTime = (t: unknown) => typeof t === "number" && Number.isFinite(t) && t > 0 && t <= MAX_TIME;
  if (
    !namesAnOrder(job) ||
    !validTime(job.createdAt) ||
    !validTime(job.expiresAt) ||
    (job.epoch !== undefined && !(Number.isInteger(job.epoch) && Number(job.epoch) >= 1))
  ) {
    return null;
  }
  return {
    orderId: job.orderId,
    saleId: job.saleId,
    userId: job.userId,
    quantity: Number(job.quantity),
    createdAt: Number(job.createdAt),
    expiresAt: Number(job.expiresAt),
    epoch: Number.isInteger(job.epoch) ? Number(job.epoch) : 1,
  };
}

/** A job none of whose orders names an existing sale: refused (an order that does is never held up). */
const noSale = () => new ApiError("INVALID_REQUEST", "The job's orders name no sale that exists.");

/**
 * A job body: `{ orders: [...] }` as enqueueOrders publishes it (a bare order is accepted too). An entry
 * that is not an order is left out (and logged), so it cannot hold up the others; a job with no order
 * at all is refused.
 */
function parseJob(body: string): QueuedOrder[] {
  let job: Partial<OrderJobBody & QueuedOrder>;
  try {
    job = JSON.parse(body) as Partial<OrderJobBody & QueuedOrder>;
  } catch {
    throw new ApiError("INVALID_REQUEST", "Job body is not JSON.");
  }
  if (job === null || typeof job !== "object")
    throw new ApiError("INVALID_REQUEST", "Job body is not an object.");
  const entries: unknown[] = Array.isArray(job.orders) ? job.orders : [job];
  if (entries.length === 0 || entries.length > MAX_ORDERS_PER_JOB) {
    throw new ApiError("INVALID_REQUEST", `A job carries 1 to ${MAX_ORDERS_PER_JOB} orders.`);
  }
  const orders = entries
    .map((o) => parseOrder(o && typeof o === "object" ? (o as Partial<QueuedOrder>) : {}))
    .filter((o): o is QueuedOrder => o !== null);
  if (orders.length === 0) throw new ApiError("INVALID_REQUEST", "Job body is not an order.");
  if (orders.length < entries.length)
    console.error(`job: ${entries.length - orders.length} entries are not orders; the rest go on`);
  return orders;
}

/** A void job's body: the attempt as the buy route hands it over (see void-order.ts). */
function parseVoidJob(body: string): VoidRequest {
  let job: Partial<Record<keyof VoidRequest, unknown>> | null;
  try {
    job = JSON.parse(body) as typeof job;
  } catch {
    job = null;
  }
  const key = job?.idempotencyKey;
  const validKey = key === null || (typeof key === "string" && /^[\x21-\x7e]{1,128}$/.test(key));
  if (!job || typeof job !== "object" || Array.isArray(job) || !namesAnOrder(job) || !validKey) {
    throw new ApiError("INVALID_REQUEST", "Job body is not a buy attempt to void.");
  }
  return {
    saleId: job.saleId,
    orderId: job.orderId,
    userId: job.userId,
    quantity: Number(job.quantity),
    idempotencyKey: key === null ? null : parseIdempotencyKey(String(key)),
  };
}

/**
 * QStash job endpoints. Every delivery is verified (401 and nothing written otherwise) and every
 * handler is idempotent: deliveries are at least once, possibly duplicated and out of order. A store
 * that is down answers 503 with Retry-After, which QStash honours when it retries.
 */
export const jobRoutes = new Hono<AppEnv>()
  .post("/order-write", signed(MAX_JOB_BODY_BYTES), async (c) => {
    const orders = parseJob(c.get("jobBody"));
    const { inserted, unknownSale } = await writeAndAck(deps(c), orders);
    if (unknownSale.length === orders.length) throw noSale();
    return c.json({ orders: orders.length, inserted, unknownSale: unknownSale.length });
  })
  .post("/payment-timeout", signed(MAX_JOB_BODY_BYTES), async (c) => {
    const orders = parseJob(c.get("jobBody"));
    const d = deps(c);
    const { expired, early, unknownSale } = await expireOrders(d, orders);
    if (unknownSale.length === orders.length) throw noSale();
    const first = early[0];
    if (first) {
      const wait = Math.max(1, Math.ceil((Math.max(...early.map((o) => o.expiresAt)) - d.now) / 1000));
      throw new ApiError("ORDER_NOT_READY", `The payment window of ${first.orderId} is still open.`, {
        retryAfterSeconds: wait,
      });
    }
    return c.json({ orders: orders.length, expired });
  })
  .post("/void-reservation", signed(MAX_JOB_BODY_BYTES), async (c) => {
    const req = parseVoidJob(c.get("jobBody"));
    const outcome = await voidAttempt(deps(c), req);
    if (outcome.kind === "not_initialised") {
      throw new ApiError("UNAVAILABLE", "The sale is being restored; the void waits for it.", {
        retryAfterSeconds: 5,
      });
    }
    return c.json({ orderId: req.orderId, outcome: outcome.kind });
  })
  .post("/failed", signed(MAX_FAILURE_BODY_BYTES), async (c) => {
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(c.get("jobBody"));
    } catch {
      parsed = null;
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new ApiError("INVALID_REQUEST", "A failure callback body is a JSON object.");
    }
    const failure = parsed as FailureCallback;
    await recordDeadLetter(deps(c).db, failure, c.req.header("Upstash-Message-Id") ?? crypto.randomUUID());
    return c.json({ recorded: true });
  });
