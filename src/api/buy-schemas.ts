import { z } from "@hono/zod-openapi";

export const MAX_QUANTITY = 10_000;
/** The buy body's cap: the contract refuses a larger one with 400. */
export const MAX_BUY_BODY_BYTES = 1024;

const quantityMessage = `quantity must be an integer from 1 to ${MAX_QUANTITY}.`;

/** `{"quantity": n}`; an empty body (or no `quantity`) means 1. */
export const buyBodySchema = z
  .object(
    {
      quantity: z
        .int({ error: quantityMessage })
        .min(1, quantityMessage)
        .max(MAX_QUANTITY, quantityMessage)
        .default(1)
        .openapi({ description: "Units to reserve (default 1).", example: 1 }),
    },
    { error: "The body must be a JSON object." },
  )
  .openapi("BuyRequest");

/** `Idempotency-Key`: 1–128 visible ASCII characters; the same key from the same shopper gets the first answer. */
export const idempotencyKeyHeader = z
  .string()
  .regex(/^[\x21-\x7e]{1,128}$/, "Idempotency-Key must be 1 to 128 visible ASCII characters.")
  .optional()
  .openapi({
    param: { name: "Idempotency-Key", in: "header" },
    description:
      "Makes a retry safe: the same key from the same shopper gets the first answer back and reserves at most once.",
    example: "7f9c2ba4-e88f-4f0c-9a0a-3c1a2b7d5e61",
  });

export const buyHeaders = z.object({
  "Idempotency-Key": idempotencyKeyHeader,
  Admission: z.string().optional().openapi({
    description:
      "Queue and draw sales: the `admission.token` of the shopper's ticket (`GET /api/sales/{saleId}/queue/me`), while it lasts. Missing, forged, for another sale or shopper, or lapsed: 403 NOT_ADMITTED, before any stock command.",
  }),
});

export const productTokenParam = z.object({
  productToken: z.string().openapi({
    param: { name: "productToken", in: "path" },
    description: "The sale's purchase token (from `Sale.productToken`); an unknown one is 404.",
    example: "Yk3w0d1oVQm5Qm8wUu0fJm0S2o3m7m5a0b1c2d3e4f5",
  }),
});

export const buyAcceptedSchema = z
  .strictObject({
    orderId: z.string().openapi({ example: "s4k2x9q1m0abc-0k3j5h7g9f1d3s5a7p9o" }),
    status: z.literal("queued"),
    quantity: z.int().min(1).openapi({ example: 1 }),
    expiresAt: z.iso.datetime().openapi({ description: "Pay before this, or the order expires." }),
  })
  .openapi("BuyAccepted");
