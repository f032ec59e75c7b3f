import { createRoute } from "@hono/zod-openapi";
import { apiRouter, json, OPERATOR, type RouteContext } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { orderIdParam, orderSchema } from "../api/order-schemas";
import { confirmPaymentBodySchema } from "../api/payment-schemas";
import { deps } from "../context";
import { ApiError } from "../http/api-error";
import { auditActor } from "../middleware/admin-auth";
import { jsonBody } from "../middleware/json-body";
import { rememberOrder } from "../orders/order-reads";
import { rowView } from "../orders/order-view";
import { confirmPayment } from "../payments/confirm-payment";
import { paymentRefusal, saleOfOrder } from "../responses/order-refusals";

const confirmRoute = createRoute({
  method: "post",
  path: "/orders/{orderId}/payment",
  tags: ["Operator", "Payments"],
  summary: "Confirm an order's payment (manual provider)",
  description:
    "With `PAYMENT_PROVIDER=manual` the shop's back end, holding the operator token, confirms it took the payment of an order: it becomes paid through the same conditional update that decides expired and cancelled, for price × quantity in CURRENCY. Confirming a paid order again answers 200. With another provider: 409 CONFLICT, nothing changes.",
  security: OPERATOR,
  middleware: [jsonBody({ maxBytes: 1024 })] as const,
  request: {
    params: orderIdParam,
    body: { required: false, content: { "application/json": { schema: confirmPaymentBodySchema } } },
  },
  responses: {
    200: json('The order, `"status": "paid"`.', orderSchema),
    ...errorResponses(
      "INVALID_REQUEST",
      "UNAUTHENTICATED",
      "FORBIDDEN",
      "UNKNOWN_ORDER",
      "ORDER_EXPIRED",
      "ORDER_CANCELLED",
      "CONFLICT",
      "UNAVAILABLE",
    ),
  },
});

/** `POST /api/admin/orders/:orderId/payment` (src/payments/confirm-payment.ts). */
async function confirmOrderPayment(c: RouteContext<typeof confirmRoute>) {
  const d = deps(c);
  const { orderId } = c.req.valid("param");
  if (d.config.PAYMENT_PROVIDER !== "manual")
    throw new ApiError("CONFLICT", `Payments are decided by the ${d.config.PAYMENT_PROVIDER} provider here.`);
  const outcome = await confirmPayment(
    d,
    saleOfOrder(orderId),
    orderId,
    c.req.valid("json").paymentRef ?? null,
    auditActor(c),
  );
  if (outcome.kind !== "paid") throw paymentRefusal(outcome);
  const view = rowView(outcome.order);
  rememberOrder(d.memory, outcome.order.userId, view);
  return c.json(view, 200);
}

export const adminPaymentRoutes = apiRouter().openapi(confirmRoute, confirmOrderPayment);
