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

const VARIANT_ID = /^[A-Za-z0-9_-]{1,32}$/;
/** Names an object keyed by variant id would mistake for its own machinery. */
const RESERVED_IDS = new Set(["__proto__", "constructor", "prototype"]);

const description = z
  .string({ error: "The description must be text." })
  .max(2_000, "At most 2,000 characters.")
  .optional()
  .openapi({
    description: "Plain text shown on the pages (up to 2,000 characters).",
    example: "Heavyweight cotton.",
  });

/** An `https:` URL, or a path on the engine's own origin (`/…`, never `//…`: that is another host). */
const imageUrl = z
  .string({ error: "The image URL must be text." })
  .max(2_048, "At most 2,048 characters.")
  .refine((u) => !hasControlOrSpace(u) && (isOwnPath(u) || isHttpsUrl(u)), {
    message: "The image URL must be an https: URL or a path on this site (starting with /).",
  })
  .optional()
  .openapi({
    description: "An https: URL, or a path on the engine's own origin.",
    example: "/assets/hoodie.png",
  });

/** White space or a control character: a browser drops some of them from a URL, changing where it points. */
function hasControlOrSpace(value: string): boolean {
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    if (code <= 0x20 || code === 0x7f || /\s/.test(ch)) return true;
  }
  return false;
}

/** A path that stays on the engine's origin however a browser reads it (no `//`, no backslash). */
function isOwnPath(value: string): boolean {
  if (!value.startsWith("/") || value.startsWith("//") || value.includes("\\")) return false;
  const origin = "https://engine.invalid";
  try {
    return new URL(value, origin).origin === origin;
  } catch {
    return false;
  }
}

function isHttpsUrl(value: string): boolean {
  try {
    return new URL(value).protocol === "https:";
  } catch {
    return false;
  }
}

/** One variant of a drop in the create body. */
const variantDefinitionSchema = z
  .object(
    {
      variantId: z
        .string({ error: "Enter a variant id." })
        .regex(VARIANT_ID, "A variant id is 1 to 32 characters of A-Z, a-z, 0-9, _ and -.")
        .refine((id) => !RESERVED_IDS.has(id), "This variant id is reserved; choose another.")
        .openapi({
          description: "Unique in the sale: 1 to 32 characters of A-Z a-z 0-9 _ -.",
          example: "eu-42",
        }),
      name: text("a variant name", 200, "The variant's name as shoppers see it.", "EU 42"),
      priceCents: whole("The price", 0, 1_000_000_000, "Price of one unit in cents.", 12900),
      stock: whole("The stock", 0, 10_000_000, "Units of this variant for sale.", 40),
      perUserLimit: whole(
        "The variant's limit",
        1,
        10_000,
        "This variant's own cap per shopper.",
        1,
      ).optional(),
      description,
      imageUrl,
    },
    { error: "A variant must be a JSON object." },
  )
  .openapi("VariantDefinition");

/**
 * The operator's `POST /api/admin/sales` body. Each message is worded for the operator page, which
 * shows `error.fields[name]` next to its input (public/assets/sale-form.js).
 */
export const saleDefinitionSchema = z
  .object(
    {
      productId: text("a product id", 128, "The shop's product id; one sale per product.", "hoodie-2026"),
      name: text("a name", 200, "The sale's name as shoppers see it.", "Studio Hoodie"),
      priceCents: whole(
        "The price",
        0,
        1_000_000_000,
        "Price of one unit in cents (a sale without `variants`).",
        7900,
      ).optional(),
      stock: whole("The stock", 0, 10_000_000, "Units for sale (a sale without `variants`).", 120).optional(),
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
      description,
      imageUrl,
      variants: z
        .array(variantDefinitionSchema, { error: "variants must be a list." })
        .min(1, "A drop has at least one variant.")
        .max(50, "A drop has at most 50 variants.")
        .optional()
        .openapi({
          description:
            "The drop's variants (1 to 50), instead of the top-level `priceCents` and `stock`. Without it the sale has one variant, `default`.",
        }),
    },
    { error: "The body must be a JSON object." },
  )
  .refine((d) => d.endsAt > d.startsAt, { path: ["endsAt"], message: "The sale must end after it starts." })
  .superRefine((d, ctx) => {
    if (d.variants) {
      for (const field of ["priceCents", "stock"] as const)
        if (d[field] !== undefined)
          ctx.addIssue({
            code: "custom",
            path: [field],
            message: `A drop with variants sets ${field} per variant.`,
          });
      const seen = new Set<string>();
      d.variants.forEach((v, i) => {
        if (seen.has(v.variantId))
          ctx.addIssue({
            code: "custom",
            path: ["variants", i, "variantId"],
            message: "Each variant id once.",
          });
        seen.add(v.variantId);
      });
    }
  })
  // the most one shopper's order can come to is stored and charged in cents as a 32-bit integer
  .refine((d) => highestPrice(d) * d.perUserLimit <= MAX_ORDER_CENTS, {
    path: ["perUserLimit"],
    message: "One shopper's order could pass 2,147,483,647 cents (price × limit per customer): lower either.",
  })
  // a sale without variants needs its price and stock: said even when other fields are wrong too
  .refine((d) => d.variants !== undefined || d.priceCents !== undefined, {
    path: ["priceCents"],
    message: "The price must be a number.",
    when: ({ value }) => withoutVariants(value, "priceCents"),
  })
  .refine((d) => d.variants !== undefined || d.stock !== undefined, {
    path: ["stock"],
    message: "The stock must be a number.",
    when: ({ value }) => withoutVariants(value, "stock"),
  })
  .transform((d): SaleDefinition => {
    const { variants, priceCents, stock, description, imageUrl, ...rest } = d;
    // a drop of one variant with its own lower cap is a sale with that cap (Redis keeps one allowance)
    const only = variants?.length === 1 ? variants[0]?.perUserLimit : undefined;
    const definition: SaleDefinition = variants
      ? {
          ...rest,
          perUserLimit: Math.min(rest.perUserLimit, only ?? rest.perUserLimit),
          priceCents: Math.min(...variants.map((v) => v.priceCents)),
          stock: variants.reduce((sum, v) => sum + v.stock, 0),
          variants: variants.map((v) => dropUndefined(v)),
        }
      : { ...rest, priceCents: priceCents ?? 0, stock: stock ?? 0 };
    if (description) definition.description = description;
    if (imageUrl) definition.imageUrl = imageUrl;
    return definition;
  })
  .openapi("SaleDefinition");

/** A body with neither `variants` nor `field`: the field is missing (a body that is no object is refused as such). */
function withoutVariants(value: unknown, field: string): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return !("variants" in value) && (value as Record<string, unknown>)[field] === undefined;
}

const MAX_ORDER_CENTS = 2_147_483_647;

function highestPrice(d: { priceCents?: number; variants?: { priceCents: number }[] }): number {
  return d.variants ? Math.max(...d.variants.map((v) => v.priceCents)) : (d.priceCents ?? 0);
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

const MAX_STOCK_DELTA = 10_000_000;
const deltaMessage = `delta must be a whole number other than 0, from -${MAX_STOCK_DELTA.toLocaleString("en-US")} to ${MAX_STOCK_DELTA.toLocaleString("en-US")}.`;

/** `{"delta": n, "variantId"?}`: units to add (positive) or remove (negative), of which variant. */
export const stockBodySchema = z
  .object(
    {
      variantId: z
        .string({ error: "variantId must be text." })
        .regex(VARIANT_ID, "A variant id is 1 to 32 characters of A-Z, a-z, 0-9, _ and -.")
        .refine((id) => !RESERVED_IDS.has(id), "This variant id is reserved; choose another.")
        .optional()
        .openapi({
          description:
            "The variant whose units change: required on a sale of several variants; on a sale of one it may be left out or be its id. A variant the sale does not have is 400 UNKNOWN_VARIANT.",
          example: "eu-42",
        }),
      delta: z
        .int({ error: deltaMessage })
        .min(-MAX_STOCK_DELTA, deltaMessage)
        .max(MAX_STOCK_DELTA, deltaMessage)
        .refine((d) => d !== 0, deltaMessage)
        .openapi({
          description:
            "Units to add (positive) or remove (negative), never 0; removing more than is not reserved (of the variant) is 409 CONFLICT.",
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
