import { z } from "@hono/zod-openapi";

/** Entries answered at most, and by default, per page. */
export const AUDIT_MAX_LIMIT = 500;
export const AUDIT_DEFAULT_LIMIT = 100;

/** `GET /api/admin/audit?saleId=&limit=&before=`. */
export const auditQuery = z.object({
  saleId: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .openapi({ description: "Only this sale's entries.", example: "s4k2x9q1m0abc" }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(AUDIT_MAX_LIMIT)
    .default(AUDIT_DEFAULT_LIMIT)
    .openapi({
      description: `Entries answered, 1 to ${AUDIT_MAX_LIMIT} (default ${AUDIT_DEFAULT_LIMIT}).`,
      example: 50,
    }),
  before: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional().openapi({
    description: "Only entries older than this entry id (the next page: the last id answered).",
    example: 120,
  }),
});

const auditEntrySchema = z
  .strictObject({
    id: z
      .string()
      .openapi({ description: "The entry's id (increasing; a page's `before`).", example: "121" }),
    at: z.iso.datetime().openapi({ description: "When the change was made." }),
    action: z.string().openapi({
      description:
        "What changed: `sale.create`, `sale.stock`, `sale.pause`, `sale.resume`, `sale.reconcile`, `order.payment`, `webhook.create`, `webhook.delete`, `webhook.rotate`, `dead_letter.replay`.",
      example: "sale.pause",
    }),
    saleId: z.string().optional().openapi({ description: "The sale changed, if any." }),
    target: z.string().optional().openapi({
      description: "What else it names: an order, an adjustment, an endpoint, a dead letter's id.",
    }),
    before: z.unknown().optional().openapi({ description: "The state before the change, where it has one." }),
    after: z.unknown().optional().openapi({ description: "The state after the change (never a secret)." }),
    requestId: z.string().openapi({ description: "The request's `X-Request-Id`." }),
    actor: z
      .string()
      .openapi({ description: "The operator's name (`admin` for ADMIN_TOKEN).", example: "alice" }),
  })
  .openapi("AuditEntry");

export const auditLogSchema = z.strictObject({ entries: z.array(auditEntrySchema) }).openapi("AuditLog");

export const auditChainSchema = z
  .strictObject({
    ok: z
      .boolean()
      .openapi({ description: "Every entry links to the one before and hashes to its content." }),
    entries: z.int().min(0).openapi({ description: "Entries walked." }),
    brokenAt: z.string().optional().openapi({ description: "The first entry that does not verify." }),
  })
  .openapi("AuditChain");
