import { createRoute } from "@hono/zod-openapi";
import { apiRouter, json, SHOPPER } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { jsonBody } from "../api/json-body";
import { orderIdParam, orderSchema, payBodySchema } from "../api/order-schemas";
import { configOf, deps } from "../context";
import { shopperAuth } from "../middleware/shopper-auth";
import { cancelOrder, payOrder } from "../orders/order-actions";
import { findOrder } from "../orders/order-repository";
import { queuedView, rowView } from "../orders/order-view";
import { readQueuedOrder } from "../orders/queued-order-store";
import { orderRefusal, saleOfOrder, unknownOrder } from "./order-refusals";

/** The pay body's cap (it holds at most a payment reference). */
const MAX_PAY_BODY_BYTES = 1024;

/** Shopper auth runs first on every order route, before the id or a body is looked at. */
const signedIn = shopperAuth({ settings: (c) => configOf(c) });

const getOrder = createRoute({
  method: "get",
  path: "/{orderId}",
  tags: ["Shopper"],
  summary: "One of the shopper's orders",
  description: "Only the owner sees an order; anyone else gets 404 UNKNOWN_ORDER, as if it did not exist.",
  security: SHOPPER,
  middleware: [signedIn] as const,
  request: { params: orderIdParam },
  responses: {
    200: json("The order (`queued` while it is not yet in Postgres).", orderSchema),
    ...errorResponses("UNAUTHENTICATED", "UNKNOWN_ORDER", "UNAVAILABLE"),
  },
});

const payRoute = createRoute({
  method: "post",
  path: "/{orderId}/pay",
  tags: ["Shopper"],
  summary: "Pay an order",
  description:
    "Paying a paid order again answers 200 with no second charge. A still-queued order is written first and paid. The body (optional, at most 1 KiB) is read as JSON whatever its Content-Type.",
  security: SHOPPER,
  middleware: [signedIn, jsonBody({ maxBytes: MAX_PAY_BODY_BYTES })] as const,
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
  middleware: [signedIn] as const,
  request: { params: orderIdParam },
  responses: {
    200: json('The order, `"status": "cancelled"`.', orderSchema),
    ...errorResponses(
      "UNAUTHENTICATED",
      "UNKNOWN_ORDER",
      "ORDER_PAID",
      "ORDER_EXPIRED",
      "CONFLICT",
      "UNAVAILABLE",
    ),
  },
});

/**
 * `GET /api/orders/:orderId`, `POST …/pay`, `POST …/cancel`: owner only (anyone else gets 404, as if
 * it did not exist). Polling reads Redis while the order is queued (one HGET) and Postgres after (one
 * query). Pay and cancel return outcomes (orders/order-actions.ts), answered through {@link orderRefusal}.
 */
export const orderRoutes = apiRouter()
  .openapi(getOrder, async (c) => {
    const d = deps(c);
    const { orderId } = c.req.valid("param");
    const saleId = saleOfOrder(orderId);
    const userId = c.get("userId");
    c.header("Cache-Control", "no-store");
    const queued = await readQueuedOrder(d.redis, saleId, orderId);
    if (queued) {
      if (queued.userId !== userId) throw unknownOrder();
      return c.json(queuedView(queued), 200);
    }
    const row = await findOrder(d.db, orderId, userId);
    if (!row) throw unknownOrder();
    return c.json(rowView(row), 200);
  })
  .openapi(payRoute, async (c) => {
    const { orderId } = c.req.valid("param");
    const paymentRef = c.req.valid("json").paymentRef ?? null;
    const outcome = await payOrder(deps(c), saleOfOrder(orderId), orderId, c.get("userId"), paymentRef);
    if (outcome.kind !== "paid") throw orderRefusal(outcome);
    return c.json(rowView(outcome.order), 200);
  })
  .openapi(cancelRoute, async (c) => {
    const { orderId } = c.req.valid("param");
    const outcome = await cancelOrder(deps(c), saleOfOrder(orderId), orderId, c.get("userId"));
    if (outcome.kind !== "cancelled") throw orderRefusal(outcome);
    return c.json(rowView(outcome.order), 200);
  });
