import { createRoute } from "@hono/zod-openapi";
import { apiRouter, json, type RouteContext, SHOPPER } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { orderIdParam, orderSchema, payBodySchema } from "../api/order-schemas";
import { deps } from "../context";
import { jsonBody } from "../middleware/json-body";
import { pressToPayOnlyLocally } from "../middleware/press-to-pay";
import { limited } from "../middleware/rate-limit";
import { shopperAuth } from "../middleware/shopper-auth";
import { cancelOrder, payOrder } from "../orders/order-actions";
import { readOwnOrder, rememberOrder } from "../orders/order-reads";
import { rowView } from "../orders/order-view";
import { closeCheckouts } from "../payments/checkout";
import { orderRefusal, saleOfOrder, unknownOrder } from "../responses/order-refusals";

/** The pay body's cap (it holds at most a payment reference). */
const MAX_PAY_BODY_BYTES = 1024;

/** Shopper auth runs first on every order route, before the id or a body is looked at. */
const signedIn = shopperAuth({ deps: (c) => deps(c) });

const getOrder = createRoute({
  method: "get",
  path: "/{orderId}",
  tags: ["Shopper"],
  summary: "One of the shopper's orders",
  description: "Only the owner sees an order; anyone else gets 404 UNKNOWN_ORDER, as if it did not exist.",
  security: SHOPPER,
  middleware: [signedIn, limited("order-read")] as const,
  request: { params: orderIdParam },
  responses: {
    200: json("The order (`queued` while it is not yet in Postgres).", orderSchema),
    ...errorResponses("UNAUTHENTICATED", "UNKNOWN_ORDER", "RATE_LIMITED", "UNAVAILABLE"),
  },
});

const payRoute = createRoute({
  method: "post",
  path: "/{orderId}/pay",
  tags: ["Shopper"],
  summary: "Pay an order",
  description:
    "Only with `PAYMENT_PROVIDER=local` (local development): the shopper's own press marks the order paid. With a payment provider (`stripe`, `manual`, the default) 409 CHECKOUT_REQUIRED and nothing changes: ask for a checkout instead. Paying a paid order again answers 200 with no second charge. A still-queued order is written first and paid. The body (optional, at most 1 KiB) is read as JSON whatever its Content-Type.",
  security: SHOPPER,
  middleware: [
    signedIn,
    limited("order-pay"),
    pressToPayOnlyLocally,
    jsonBody({ maxBytes: MAX_PAY_BODY_BYTES }),
  ] as const,
  request: {
    params: orderIdParam,
    body: { required: false, content: { "application/json": { schema: payBodySchema } } },
  },
  responses: {
    200: json('The order, `"status": "paid"`.', orderSchema),
    ...errorResponses(
      "INVALID_REQUEST",
      "UNAUTHENTICATED",
      "UNKNOWN_ORDER",
      "ORDER_EXPIRED",
      "ORDER_CANCELLED",
      "ORDER_NOT_READY",
      "CHECKOUT_REQUIRED",
      "RATE_LIMITED",
      "UNAVAILABLE",
    ),
  },
});

const cancelRoute = createRoute({
  method: "post",
  path: "/{orderId}/cancel",
  tags: ["Shopper"],
  summary: "Cancel an order",
  description:
    "Allowed while `queued` or `awaiting_payment`; the units and the shopper's allowance come back at once, and a later order write does not bring the order back. Cancelling a cancelled order again answers 200.",
  security: SHOPPER,
  middleware: [signedIn, limited("order-cancel")] as const,
  request: { params: orderIdParam },
  responses: {
    200: json('The order, `"status": "cancelled"`.', orderSchema),
    ...errorResponses(
      "UNAUTHENTICATED",
      "UNKNOWN_ORDER",
      "ORDER_PAID",
      "ORDER_EXPIRED",
      "CONFLICT",
      "RATE_LIMITED",
      "UNAVAILABLE",
    ),
  },
});

/** `GET /api/orders/:orderId`: one of the shopper's orders. */
async function getOwnOrder(c: RouteContext<typeof getOrder>) {
  const { orderId } = c.req.valid("param");
  c.header("Cache-Control", "no-store");
  const read = await readOwnOrder(deps(c), saleOfOrder(orderId), orderId, c.get("userId"));
  if (read.kind === "unknown") throw unknownOrder();
  return c.json(read.view, 200);
}

/** `POST /api/orders/:orderId/pay`: pay an order. */
async function payOwnOrder(c: RouteContext<typeof payRoute>) {
  const d = deps(c);
  const { orderId } = c.req.valid("param");
  const userId = c.get("userId");
  const paymentRef = c.req.valid("json").paymentRef ?? null;
  const outcome = await payOrder(d, saleOfOrder(orderId), orderId, userId, paymentRef);
  if (outcome.kind !== "paid") throw orderRefusal(outcome);
  const view = rowView(outcome.order);
  rememberOrder(d.memory, userId, view);
  return c.json(view, 200);
}

/** `POST /api/orders/:orderId/cancel`: cancel an order. */
async function cancelOwnOrder(c: RouteContext<typeof cancelRoute>) {
  const d = deps(c);
  const { orderId } = c.req.valid("param");
  const userId = c.get("userId");
  const outcome = await cancelOrder(d, saleOfOrder(orderId), orderId, userId);
  if (outcome.kind !== "cancelled") throw orderRefusal(outcome);
  if (d.payments) d.defer(closeCheckouts(d, [orderId]));
  const view = rowView(outcome.order);
  rememberOrder(d.memory, userId, view);
  return c.json(view, 200);
}

/**
 * `GET /api/orders/:orderId`, `POST …/pay`, `POST …/cancel`: owner only (anyone else gets 404, as if
 * it did not exist), each limited per shopper and per address. A read is answered from what the process
 * knows (an order in a final status, or one its order feed just read), else from Redis while the order
 * is queued (one HGET) and Postgres after (one query): orders/order-reads.ts. Pay and cancel return
 * outcomes (orders/order-actions.ts), answered through {@link orderRefusal}.
 */
export const orderRoutes = apiRouter()
  .openapi(getOrder, getOwnOrder)
  .openapi(payRoute, payOwnOrder)
  .openapi(cancelRoute, cancelOwnOrder);
