import { z } from "zod";
import { ApiError } from "../errors";

const isoDate = z.iso.datetime({ offset: true }).transform((s) => Date.parse(s));

/** The operator's `POST /api/admin/sales` body. */
export const saleDefinitionSchema = z
  .object({
    productId: z.string().trim().min(1).max(128),
    name: z.string().trim().min(1).max(200),
    priceCents: z.number().int().min(0).max(1_000_000_000),
    stock: z.number().int().min(0).max(10_000_000),
    perUserLimit: z.number().int().min(1).max(10_000),
    startsAt: isoDate,
    endsAt: isoDate,
    paymentWindowSeconds: z
      .number()
      .int()
      .min(1)
      .max(7 * 24 * 3600),
  })
  .refine((d) => d.endsAt > d.startsAt, { path: ["endsAt"], message: "endsAt must be after startsAt" });

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
