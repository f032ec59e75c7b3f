import { z } from "@hono/zod-openapi";

export const MAX_QUANTITY = 10_000;
/** The buy body's cap: the contract refuses a larger one with 400. */
export const MAX_BUY_BODY_BYTES = 1024;

const quantityMessage = `quantity must be an integer from 1 to ${MAX_QUANTITY}.`;

/** The most lines one cart may hold. */
export const MAX_CART_LINES = 10;

const quantity = z.int({ error: quantityMessage }).min(1, quantityMessage).max(MAX_QUANTITY, quantityMessage);

const variantId = z
  .string({ error: "variantId must be a string." })
  .min(1, "variantId must not be empty.")
  .max(64, "variantId is at most 32 characters of A-Z a-z 0-9 _ -.")
  .openapi({ description: "One of the sale's `variants[].variantId`.", example: "eu-42" });

const cartLine = z
  .object({ variantId, quantity }, { error: "Each line is an object: {variantId, quantity}." })
  .openapi("CartLine");

/**
 * `{"quantity": n}` (a one-variant sale; an empty body or no `quantity` means 1), `{"variantId", "quantity"}`,
 * or `{"items": [{"variantId", "quantity"}]}`: 1 to 10 lines, each variant at most once, reserved all or none.
 */
export const buyBodySchema = z
  .object(
    {
      quantity: quantity.default(1).openapi({
        description: "Units to reserve (default 1); with `variantId`, of that variant.",
        example: 1,
      }),
      variantId: variantId.optional(),
      items: z
        .array(cartLine, { error: "items must be a list of {variantId, quantity}." })
        .min(1, `items holds 1 to ${MAX_CART_LINES} lines.`)
        .max(MAX_CART_LINES, `items holds 1 to ${MAX_CART_LINES} lines.`)
        .optional()
        .openapi({ description: "A cart: every line is reserved, or none is." }),
    },
    { error: "The body must be a JSON object." },
  )
  .refine((b) => !(b.items && b.variantId !== undefined), {
    path: ["variantId"],
    message: "Send either variantId and quantity, or items.",
  })
  .refine((b) => !b.items || new Set(b.items.map((l) => l.variantId)).size === b.items.length, {
    path: ["items"],
    message: "Each variant at most once in items.",
  })
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
