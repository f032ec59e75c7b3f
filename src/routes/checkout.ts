import { createRoute } from "@hono/zod-openapi";
import { apiRouter, json, type RouteContext, SHOPPER } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { orderIdParam } from "../api/order-schemas";
import { checkoutSchema } from "../api/payment-schemas";
import { deps } from "../context";
import { limited } from "../middleware/rate-limit";
import { shopperAuth } from "../middleware/shopper-auth";
import { openCheckout } from "../payments/checkout";
import { paymentRefusal, saleOfOrder } from "../responses/order-refusals";

const signedIn = shopperAuth({ deps: (c) => deps(c) });

const checkoutRoute = createRoute({
  method: "post",
  path: "/{orderId}/checkout",
  tags: ["Shopper", "Payments"],
  summary: "Where to pay an order",
  description:
    "Owner only. With `PAYMENT_PROVIDER=stripe` a Stripe Checkout Session for price × quantity, opened once: every retry, concurrent or later, answers the same one. With `manual` or `local` the URL is the shopper page of the order. A still-queued order is written first (409 ORDER_NOT_READY with Retry-After while it cannot be yet).",
  security: SHOPPER,
  middleware: [signedIn, limited("order-checkout")] as const,
  request: { params: orderIdParam },
  responses: {
    200: json("The order's checkout.", checkoutSchema),
    ...errorResponses(
      "UNAUTHENTICATED",
      "UNKNOWN_ORDER",
      "ORDER_NOT_READY",
      "ORDER_EXPIRED",
      "ORDER_CANCELLED",
      "ORDER_PAID",
      "RATE_LIMITED",
      "UNAVAILABLE",
    ),
  },
});

/** `POST /api/orders/:orderId/checkout` (src/payments/checkout.ts), answered through {@link paymentRefusal}. */
async function checkoutOrder(c: RouteContext<typeof checkoutRoute>) {
  const { orderId } = c.req.valid("param");
  c.header("Cache-Control", "no-store");
  const outcome = await openCheckout(deps(c), saleOfOrder(orderId), orderId, c.get("userId"));
  if (outcome.kind !== "checkout") throw paymentRefusal(outcome);
  return c.json(outcome.checkout, 200);
}

export const checkoutRoutes = apiRouter().openapi(checkoutRoute, checkoutOrder);
