import { createRoute } from "@hono/zod-openapi";
import { apiRouter, json, type RouteContext, STRIPE } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { webhookAnswerSchema } from "../api/payment-schemas";
import { deps } from "../context";
import { ApiError } from "../http/api-error";
import { readBoundedBody } from "../http/read-body";
import { handlePaymentEvent } from "../payments/payment-webhook";

/** Stripe's events are a few KiB; a bigger body is refused before it is read. */
const MAX_EVENT_BYTES = 256 * 1024;

const stripeWebhook = createRoute({
  method: "post",
  path: "/stripe/webhook",
  tags: ["Payments"],
  summary: "Stripe's events",
  description:
    "Stripe delivers its events here (PAYMENT_PROVIDER=stripe). The `Stripe-Signature` header is verified over the raw body with STRIPE_WEBHOOK_SECRET (400 otherwise, and nothing changes). `checkout.session.completed` with `payment_status: paid` makes its order (`client_reference_id`) paid when the session is the checkout opened for that order and the amount (price × quantity) and the currency (CURRENCY) match; a payment that arrives after the order expired or was cancelled is refunded exactly once and shown on the order. Events are handled once by id: a duplicated, reordered or late delivery changes nothing more. A 503 asks Stripe to deliver again.",
  security: STRIPE,
  responses: {
    200: json("The event was handled (now or before).", webhookAnswerSchema),
    ...errorResponses("INVALID_REQUEST", "UNAVAILABLE"),
  },
});

/** `POST /api/payments/stripe/webhook` (src/payments/payment-webhook.ts). */
async function receiveStripeEvent(c: RouteContext<typeof stripeWebhook>) {
  const d = deps(c);
  const body = await readBoundedBody(c.req.raw, MAX_EVENT_BYTES);
  const event = d.payments
    ? await d.payments.verifyEvent(body, c.req.header("Stripe-Signature") ?? null)
    : null;
  if (!event) throw new ApiError("INVALID_REQUEST", "The Stripe-Signature header does not verify this body.");
  const outcome = await handlePaymentEvent(d, event);
  return c.json({ received: true as const, outcome }, 200);
}

export const paymentRoutes = apiRouter().openapi(stripeWebhook, receiveStripeEvent);
