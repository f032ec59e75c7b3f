import { createRoute } from "@hono/zod-openapi";
import { apiRouter, json, QSTASH, type RouteContext } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import {
  failureCallbackSchema,
  failureRecordedSchema,
  orderJobSchema,
  orderWriteResultSchema,
  paymentTimeoutResultSchema,
  voidJobSchema,
  voidResultSchema,
} from "../api/job-schemas";
import { voidAttempt } from "../buy/void-attempt";
import { configOf, deps } from "../context";
import { ApiError } from "../http/api-error";
import { JOB_ROUTES } from "../job-paths";
import { qstashSignature } from "../middleware/qstash-signature";
import { recordDeadLetter } from "../orders/dead-letters";
import { expireOrders } from "../orders/order-lifecycle";
import { writeAndAck } from "../orders/order-write-job";
import { closeCheckouts } from "../payments/checkout";

/**
 * The largest job body taken: 50 orders of at most about 1 KiB each (ids, numbers and a 128-character
 * user id, 6 bytes a character where JSON escapes it). A larger body is 413 before it is read.
 */
const MAX_JOB_BODY_BYTES = 64 * 1024;
/** A failure callback carries the job body in base64 (4/3 of it) and the answer QStash got. */
const MAX_FAILURE_BODY_BYTES = 4 * MAX_JOB_BODY_BYTES;

/**
 * The QStash signature check for a route whose bodies are at most `maxBodyBytes`: the route's first
 * middleware, so nothing (not even the body's schema) is looked at before the delivery is verified.
 */
function signed(maxBodyBytes: number) {
  return qstashSignature({
    maxBodyBytes,
    keys: (c) => {
      const config = configOf(c);
      return { current: config.QSTASH_CURRENT_SIGNING_KEY, next: config.QSTASH_NEXT_SIGNING_KEY };
    },
    publicUrl: (c) => configOf(c).PUBLIC_URL,
  });
}

const DELIVERY =
  "Deliveries are at least once, possibly duplicated and out of order: the route is idempotent. A store that is down answers 503 with Retry-After, which QStash honours when it retries.";

/** A job route's request: its signed JSON body, validated by `schema` once the signature holds. */
const signedBody = <S>(schema: S) => ({
  body: { required: true, content: { "application/json": { schema } } },
});

const JOB_ERRORS = ["INVALID_REQUEST", "UNAUTHENTICATED", "PAYLOAD_TOO_LARGE", "UNAVAILABLE"] as const;

const orderWrite = createRoute({
  method: "post",
  path: JOB_ROUTES.orderWrite,
  tags: ["Jobs"],
  summary: "Write reserved orders to Postgres",
  description: `Writes each order once (awaiting payment) and makes sure Redis counts it. An order naming a sale that does not exist is left out; a job none of whose orders does is refused (400). ${DELIVERY} Bodies over 64 KiB are 413 before they are read.`,
  security: QSTASH,
  middleware: [signed(MAX_JOB_BODY_BYTES)] as const,
  request: signedBody(orderJobSchema),
  responses: { 200: json("What the job wrote.", orderWriteResultSchema), ...errorResponses(...JOB_ERRORS) },
});

const paymentTimeout = createRoute({
  method: "post",
  path: JOB_ROUTES.paymentTimeout,
  tags: ["Jobs"],
  summary: "Expire unpaid orders",
  description: `Expires the orders still unpaid when their payment window closed (by Postgres's clock) and gives their units back, exactly once; an order not yet written is written first. While a window is still open the answer is 409 ORDER_NOT_READY with Retry-After (QStash delivers again). ${DELIVERY} Bodies over 64 KiB are 413 before they are read.`,
  security: QSTASH,
  middleware: [signed(MAX_JOB_BODY_BYTES)] as const,
  request: signedBody(orderJobSchema),
  responses: {
    200: json("What the job expired.", paymentTimeoutResultSchema),
    ...errorResponses(...JOB_ERRORS, "ORDER_NOT_READY"),
  },
});

const voidReservation = createRoute({
  method: "post",
  path: JOB_ROUTES.voidReservation,
  tags: ["Jobs"],
  summary: "Void a buy attempt answered 503",
  description: `Makes the buy route's 503 ("nothing was reserved") true for an attempt whose outcome it never learned: an unclaimed reservation is given back, or a tombstone keeps a late run from reserving. 503 while the sale is being restored. ${DELIVERY} Bodies over 64 KiB are 413 before they are read.`,
  security: QSTASH,
  middleware: [signed(MAX_JOB_BODY_BYTES)] as const,
  request: signedBody(voidJobSchema),
  responses: { 200: json("What the void came to.", voidResultSchema), ...errorResponses(...JOB_ERRORS) },
});

const failed = createRoute({
  method: "post",
  path: JOB_ROUTES.failed,
  tags: ["Jobs"],
  summary: "Record a job QStash gave up on",
  description: `QStash's failure callback: the job is recorded once per message id, where the operator page shows it. ${DELIVERY} Bodies over 256 KiB are 413 before they are read.`,
  security: QSTASH,
  middleware: [signed(MAX_FAILURE_BODY_BYTES)] as const,
  request: signedBody(failureCallbackSchema),
  responses: { 200: json("Recorded.", failureRecordedSchema), ...errorResponses(...JOB_ERRORS) },
});

/** A job none of whose orders names an existing sale: refused (an order that does is never held up). */
const noSale = () => new ApiError("INVALID_REQUEST", "The job's orders name no sale that exists.");

/** `POST /api/jobs/order-write`: write reserved orders to Postgres. */
async function orderWriteJob(c: RouteContext<typeof orderWrite>) {
  const orders = c.req.valid("json");
  const d = deps(c);
  const { inserted, unknownSale } = await writeAndAck(d, orders, d);
  if (unknownSale.length === orders.length) throw noSale();
  return c.json({ orders: orders.length, inserted, unknownSale: unknownSale.length }, 200);
}

/** `POST /api/jobs/payment-timeout`: expire unpaid orders. */
async function paymentTimeoutJob(c: RouteContext<typeof paymentTimeout>) {
  const orders = c.req.valid("json");
  const d = deps(c);
  const { expired, early, unknownSale } = await expireOrders(d, orders);
  // every delivery, not only the one that expired them: a retry after a failure half-way closes them too
  if (d.payments)
    d.defer(
      closeCheckouts(
        d,
        orders.map((o) => o.orderId),
      ),
    );
  if (unknownSale.length === orders.length) throw noSale();
  const first = early[0];
  if (first) {
    const wait = Math.max(1, Math.ceil((Math.max(...early.map((o) => o.expiresAt)) - d.now) / 1000));
    throw new ApiError("ORDER_NOT_READY", `The payment window of ${first.orderId} is still open.`, {
      retryAfterSeconds: wait,
    });
  }
  return c.json({ orders: orders.length, expired }, 200);
}

/** `POST /api/jobs/void-reservation`: void a buy attempt answered 503. */
async function voidReservationJob(c: RouteContext<typeof voidReservation>) {
  const req = c.req.valid("json");
  const outcome = await voidAttempt(deps(c), req);
  if (outcome.kind === "not_initialised") {
    throw new ApiError("UNAVAILABLE", "The sale is being restored; the void waits for it.", {
      retryAfterSeconds: 5,
    });
  }
  return c.json({ orderId: req.orderId, outcome: outcome.kind }, 200);
}

/** `POST /api/jobs/failed`: record a job QStash gave up on. */
async function failedJob(c: RouteContext<typeof failed>) {
  const failure = c.req.valid("json");
  await recordDeadLetter(deps(c).db, failure, c.req.header("Upstash-Message-Id") ?? crypto.randomUUID());
  return c.json({ recorded: true as const }, 200);
}

/**
 * QStash job endpoints. Every delivery is verified first (401 and nothing written otherwise), then its
 * body is validated by the route's schema (api/job-schemas.ts); every handler is idempotent.
 */
export const jobRoutes = apiRouter()
  .openapi(orderWrite, orderWriteJob)
  .openapi(paymentTimeout, paymentTimeoutJob)
  .openapi(voidReservation, voidReservationJob)
  .openapi(failed, failedJob);
