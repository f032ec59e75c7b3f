import { z } from "zod";
import { ApiError } from "../errors";

const isoDate = z.iso
  .datetime({ offset: true, error: "Enter a date and time (ISO 8601, e.g. 2026-12-01T10:00:00Z)." })
  .transform((s) => Date.parse(s));

/** A whole number in [min, max], with a sentence a shop operator can act on. */
const whole = (what: string, min: number, max: number) =>
  z
    .number({ error: `${what} must be a number.` })
    .int(`${what} must be a whole number.`)
    .min(min, `${what} must be at least ${min}.`)
    .max(max, `${what} must be at most ${max.toLocaleString("en-US")}.`);

const text = (what: string, max: number) =>
  z
    .string({ error: `Enter ${what}.` })
    .trim()
    .min(1, `Enter ${what}.`)
    .max(max, `At most ${max} characters.`);

/** The operator's `POST /api/admin/sales` body. */
export const saleDefinitionSchema = z
  .object({
    productId: text("a product id", 128),
    name: text("a name", 200),
    priceCents: whole("The price", 0, 1_000_000_000),
    stock: whole("The stock", 0, 10_000_000),
    perUserLimit: whole("The limit per customer", 1, 10_000),
    startsAt: isoDate,
    endsAt: isoDate,
    paymentWindowSeconds: whole("The payment window", 1, 7 * 24 * 3600),
  })
  .refine((d) => d.endsAt > d.startsAt, { path: ["endsAt"], message: "The sale must end after it starts." });

export type SaleDefinition = z.infer<typeof saleDefinitionSchema>;

/** Validates a sale definition; the 400 names each bad field so a form can show it next to the input. */
export function parseSaleDefinition(body: unknown): SaleDefinition {
  const result = saleDefinitionSchema.safeParse(body);
  if (result.success) return result.data;
  const fields: Record<string, string> = {};
  for (const issue of result.error.issues) fields[issue.path.join(".") || "body"] ??= issue.message;
  throw new ApiError("INVALID_REQUEST", "The sale definition is invalid.", { details: { fields } });
}

/** `{"delta": n}`: a non-zero integer. */
export function parseStockDelta(body: Record<string, unknown>): number {
  const delta = body.delta;
  if (typeof delta !== "number" || !Number.isInteger(delta) || delta === 0 || Math.abs(delta) > 10_000_000) {
    throw new ApiError("INVALID_REQUEST", "delta must be a non-zero integer.");
  }
  return delta;
}
