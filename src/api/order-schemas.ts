import { z } from "@hono/zod-openapi";

export const orderIdParam = z.object({
  orderId: z.string().openapi({
    param: { name: "orderId", in: "path" },
    description: "The order id the buy answered (an id that is not one is 404 UNKNOWN_ORDER).",
    example: "s4k2x9q1m0abc-0k3j5h7g9f1d3s5a7p9o",
  }),
});

/** The contract's `payment` of an order: set once a payment provider took part. */
export const orderPaymentSchema = z
  .strictObject({
    provider: z.enum(["stripe", "manual", "local"]).openapi({ description: "Who took the payment." }),
    status: z.enum(["pending", "paid", "refunded"]).openapi({
      description:
        "`pending`: a checkout is open; `paid`; `refunded`: the money came after the order expired or was cancelled and was given back (the order keeps its status).",
    }),
    amountCents: z.int().min(0).openapi({ example: 2500 }),
    currency: z.string().openapi({ example: "usd" }),
  })
  .openapi("OrderPayment");

/** A line of an order: a variant, its units and the unit price it was reserved at. */
export const orderItemSchema = z
  .strictObject({
    variantId: z.string().openapi({ example: "eu-42" }),
    name: z.string().openapi({ example: "EU 42" }),
    quantity: z.int().min(1).openapi({ example: 1 }),
    priceCents: z.int().min(0).openapi({ description: "Unit price in cents.", example: 12900 }),
  })
  .openapi("OrderItem");

/** The contract's `Order`, the same whether it is still queued in Redis or written to Postgres. */
export const orderSchema = z
  .strictObject({
    orderId: z.string().openapi({ example: "s4k2x9q1m0abc-0k3j5h7g9f1d3s5a7p9o" }),
    saleId: z.string().openapi({ example: "s4k2x9q1m0abc" }),
    quantity: z.int().min(1).openapi({ example: 1 }),
    status: z.enum(["queued", "awaiting_payment", "paid", "expired", "cancelled"]).openapi({
      description:
        "`queued`: stock reserved, order not yet in Postgres; `expired` and `cancelled` gave their units back.",
    }),
    createdAt: z.iso.datetime(),
    expiresAt: z.iso.datetime().openapi({ description: "End of the payment window." }),
    paidAt: z.iso.datetime().optional(),
    payment: orderPaymentSchema.optional(),
    items: z.array(orderItemSchema).min(1).openapi({
      description: "The order's lines, each variant once; `quantity` is the total of their units.",
    }),
    amountCents: z.int().min(0).openapi({
      description: "The sum of quantity × price over the lines: what checkout charges.",
      example: 25800,
    }),
  })
  .openapi("Order");

/** The optional pay body: the payment provider's reference. */
export const payBodySchema = z
  .object(
    {
      paymentRef: z
        .string({ error: "paymentRef must be a string of 1 to 200 characters." })
        .min(1, "paymentRef must be a string of 1 to 200 characters.")
        .max(200, "paymentRef must be a string of 1 to 200 characters.")
        .nullable()
        .optional()
        .openapi({ description: "The payment provider's reference.", example: "pi_3Pq2x" }),
    },
    { error: "The body must be a JSON object." },
  )
  .openapi("PayRequest");
