import { z } from "@hono/zod-openapi";

/** A sale id: `s` and 11 base36 characters. */
export const saleIdParam = z.object({
  saleId: z.string().openapi({
    param: { name: "saleId", in: "path" },
    example: "s4k2x9q1m0abc",
    description: "The sale's id.",
  }),
});

const isoTime = (description: string) =>
  z.iso.datetime().openapi({ description, example: "2026-12-01T10:00:00.000Z" });

/** A variant in a `Sale`: a size, a tier, a colour, with its own price and units left. */
export const variantSchema = z
  .strictObject({
    variantId: z.string().openapi({ example: "eu-42" }),
    name: z.string().openapi({ example: "EU 42" }),
    priceCents: z.int().min(0).openapi({ description: "Price of one unit in cents.", example: 12900 }),
    remaining: z.int().min(0).openapi({ description: "Units of this variant not reserved.", example: 37 }),
    status: z.enum(["upcoming", "live", "sold_out", "ended", "paused"]).openapi({
      description:
        "`sold_out` while the sale is live and this variant has nothing left; else the sale's status.",
    }),
    perUserLimit: z.int().min(1).optional().openapi({
      description: "This variant's own cap per shopper, under the sale's `perUserLimit` (when set).",
    }),
    description: z.string().optional(),
    imageUrl: z.string().optional(),
  })
  .openapi("Variant");

/** The contract's `Sale`; shoppers see `productToken` only while the sale is live, operators always. */
export const saleSchema = z
  .strictObject({
    saleId: z.string().openapi({ example: "s4k2x9q1m0abc" }),
    name: z.string().openapi({ example: "Concert tickets" }),
    priceCents: z.int().min(0).openapi({ description: "Price of one unit in cents.", example: 4900 }),
    perUserLimit: z.int().min(1).openapi({ description: "Most units one shopper may hold.", example: 2 }),
    startsAt: isoTime("When buying opens (UTC)."),
    endsAt: isoTime("When buying closes (UTC)."),
    status: z.enum(["upcoming", "live", "sold_out", "ended", "paused"]),
    remaining: z.int().min(0).openapi({ description: "Units not reserved.", example: 998 }),
    stock: z.int().min(0).openapi({ description: "Units for sale, adjustments included.", example: 1000 }),
    paymentWindowSeconds: z.int().min(1).openapi({ description: "Time to pay after buying.", example: 600 }),
    serverTime: isoTime("The store's clock when this was read (the clock the sale window follows)."),
    admission: z.enum(["open", "queue", "draw"]).openapi({
      description:
        "`open`: everyone may buy; `queue`: through the waiting room (tickets taken before the start are shuffled at the start, later ones served in order); `draw`: entries until the start, then a verifiable draw. Queue and draw sales need the `Admission` header on a buy.",
      example: "open",
    }),
    proofOfWork: z.boolean().openapi({
      description:
        "Joining the waiting room asks for an ALTCHA proof of work (`GET /api/sales/{saleId}/queue/challenge`).",
      example: false,
    }),
    productToken: z.string().optional().openapi({
      description: "The purchase token for `POST /api/buy/{productToken}` (shoppers: only while live).",
      example: "Yk3w0d1oVQm5Qm8wUu0fJm0S2o3m7m5a0b1c2d3e4f5",
    }),
    description: z.string().optional().openapi({ description: "Plain text about the drop, when set." }),
    imageUrl: z
      .string()
      .optional()
      .openapi({ description: "The drop's picture (https: or a path here), when set." }),
    variants: z.array(variantSchema).min(1).max(50).openapi({
      description:
        "The drop's variants in the operator's order (a sale made without variants has one, `default`); their `remaining` adds up to the sale's, and the sale is `sold_out` only when every variant is.",
    }),
  })
  .openapi("Sale");

export const saleListSchema = z
  .strictObject({ sales: z.array(saleSchema), serverTime: isoTime("The store's clock.") })
  .openapi("SaleList");
