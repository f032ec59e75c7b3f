import { z } from "@hono/zod-openapi";

/** The checkout answer: where the shopper pays the order, until when. */
export const checkoutSchema = z
  .strictObject({
    orderId: z.string().openapi({ example: "s4k2x9q1m0abc-0k3j5h7g9f1d3s5a7p9o" }),
    provider: z.enum(["stripe", "manual", "local"]),
    url: z.url().openapi({
      description:
        "Where to send the shopper: Stripe's hosted checkout (`stripe`), else the shopper page of the order.",
      example: "https://checkout.stripe.com/c/pay/cs_test_a1b2c3",
    }),
    expiresAt: z.iso.datetime().openapi({ description: "End of the order's payment window." }),
  })
  .openapi("Checkout");

/** The optional body of an operator's payment confirmation. */
export const confirmPaymentBodySchema = z
  .object(
    {
      paymentRef: z
        .string({ error: "paymentRef must be a string of 1 to 200 characters." })
        .min(1, "paymentRef must be a string of 1 to 200 characters.")
        .max(200, "paymentRef must be a string of 1 to 200 characters.")
        .optional()
        .openapi({ description: "The shop's reference of the payment it took.", example: "shop-pay-42" }),
    },
    { error: "The body must be a JSON object." },
  )
  .openapi("PaymentConfirmation");

/** What the Stripe webhook answers once an event is handled (or was before). */
export const webhookAnswerSchema = z
  .strictObject({
    received: z.literal(true),
    outcome: z
      .enum(["duplicate", "ignored", "unknown_order", "mismatch", "paid", "refunded", "final"])
      .openapi({
        description:
          "What the event came to: `paid`; `final` (paid before); `refunded` (paid on the order's own checkout after the order expired or was cancelled, in any amount: given back and shown on the order); `mismatch` (not the order's own checkout session, or an amount or currency that differs from an open or paid order's: not paid, nothing refunded); `duplicate` (seen before); `ignored`; `unknown_order`.",
      }),
  })
  .openapi("StripeWebhookAnswer");
