import { z } from "@hono/zod-openapi";
import type { SaleDefinition } from "../sales/create-sale";
import { idempotencyKeyHeader } from "./buy-schemas";
import { saleSchema } from "./sale-schemas";

/** The operator routes' body cap (a sale definition is a few hundred bytes). */
export const MAX_ADMIN_BODY_BYTES = 16 * 1024;

const isoDate = (description: string, example: string) =>
  z.iso
    .datetime({ offset: true, error: "Enter a date and time (ISO 8601, e.g. 2026-12-01T10:00:00Z)." })
    .transform((s) => Date.parse(s))
    .openapi({ description, example });

/** A whole number in [min, max], with a sentence a shop operator can act on (the page shows it as is). */
const whole = (what: string, min: number, max: number, description: string, example: number) =>
  z
    .number({ error: `${what} must be a number.` })
    .int(`${what} must be a whole number.`)
    .min(min, `${what} must be at least ${min}.`)
    .max(max, `${what} must be at most ${max.toLocaleString("en-US")}.`)
    .openapi({ description, example });

const text = (what: string, max: number, description: string, example: string) =>
  z
    .string({ error: `Enter ${what}.` })
    .trim()
    .min(1, `Enter ${what}.`)
    .max(max, `At most ${max} characters.`)
    .openapi({ description, example });

/**
 * The operator's `POST /api/admin/sales` body. Each message is worded for the operator page, which
 * shows `error.fields[name]` next to its input (public/assets/sale-form.js).
 */
export const saleDefinitionSchema = z
  .object(
    {
      productId: text("a product id", 128, "The shop's product id; one sale per product.", "hoodie-2026"),
      name: text("a name", 200, "The sale's name as shoppers see it.", "Studio Hoodie"),
      priceCents: whole("The price", 0, 1_000_000_000, "Price of one unit in cents.", 7900),
      stock: whole("The stock", 0, 10_000_000, "Units for sale.", 120),
      perUserLimit: whole("The limit per customer", 1, 10_000, "Most units one shopper may hold.", 2),
      startsAt: isoDate("When buying opens (with a zone offset or Z).", "2026-12-01T10:00:00Z"),
      endsAt: isoDate("When buying closes; after `startsAt`.", "2026-12-01T12:00:00Z"),
      paymentWindowSeconds: whole(
        "The payment window",
        1,
        7 * 24 * 3600,
        "Time to pay after buying; an unpaid order then expires and gives its units back.",
        600,
      ),
      admission: z
        .enum(["open", "queue", "draw"], { error: "admission must be open, queue or draw." })
        .default("open")
        .openapi({ description: "How shoppers are let in (see Sale.admission).", example: "open" }),
      proofOfWork: z.boolean({ error: "proofOfWork must be true or false." }).default(false).openapi({
        description: "Queue and draw sales: joining asks for an ALTCHA proof of work.",
        example: false,
      }),
    },
    { error: "The body must be a JSON object." },
  )
  .refine((d) => d.endsAt > d.startsAt, { path: ["endsAt"], message: "The sale must end after it starts." })
  .openapi("SaleDefinition") satisfies z.ZodType<SaleDefinition>;

const MAX_STOCK_DELTA = 10_000_000;
const deltaMessage = `delta must be a whole number other than 0, from -${MAX_STOCK_DELTA.toLocaleString("en-US")} to ${MAX_STOCK_DELTA.toLocaleString("en-US")}.`;

/** `{"delta": n}`: units to add (positive) or remove (negative). */
export const stockBodySchema = z
  .object(
    {
      delta: z
        .int({ error: deltaMessage })
        .min(-MAX_STOCK_DELTA, deltaMessage)
        .max(MAX_STOCK_DELTA, deltaMessage)
        .refine((d) => d !== 0, deltaMessage)
        .openapi({
          description:
            "Units to add (positive) or remove (negative), never 0; removing more than is not reserved is 409 CONFLICT.",
          example: 50,
        }),
    },
    { error: "The body must be a JSON object." },
  )
  .openapi("StockAdjustment");

export const stockHeaders = z.object({
  "Idempotency-Key": idempotencyKeyHeader.openapi({
    description:
      "Makes a retry safe: an adjustment sent again with the same key is applied once, whatever failed in between; the same key with another delta is 409 CONFLICT. Without one, a 503 cannot say whether the adjustment was applied.",
    example: "2b1f0c7e-6a1d-4f3e-9c55-0d3a8e1b7f42",
  }),
});

/**
 * The contract's `Sale` as operators see it: `productToken` always present. Its own object (not an
 * `allOf` on `Sale`), since both are strict: a strict part naming only `productToken` would refuse the rest.
 */
export const operatorSaleSchema = z
  .strictObject({
    ...saleSchema.shape,
    productToken: z.string().openapi({
      description: "The purchase token for `POST /api/buy/{productToken}`.",
      example: "Yk3w0d1oVQm5Qm8wUu0fJm0S2o3m7m5a0b1c2d3e4f5",
    }),
  })
  .openapi("OperatorSale");

export const operatorSaleListSchema = z
  .strictObject({
    sales: z.array(operatorSaleSchema).openapi({ description: "Every sale, ended ones included." }),
    serverTime: z.iso.datetime().openapi({ description: "The engine's clock when this was read." }),
  })
  .openapi("OperatorSaleList");
