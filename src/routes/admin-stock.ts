import { createRoute } from "@hono/zod-openapi";
import {
  MAX_ADMIN_BODY_BYTES,
  operatorSaleSchema,
  stockBodySchema,
  stockHeaders,
} from "../api/admin-schemas";
import { apiRouter, json, OPERATOR, type RouteContext } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { saleIdParam } from "../api/sale-schemas";
import { toSaleView, variantsOfSale } from "../catalog/sale-record";
import { forgetSaleList } from "../catalog/sale-store";
import { deps } from "../context";
import { StoreUnavailableError } from "../errors";
import { ApiError } from "../http/api-error";
import { auditActor } from "../middleware/admin-auth";
import { jsonBody } from "../middleware/json-body";
import { type AdjustmentResult, applyStockAdjustment } from "../sales/stock-adjustment";
import { announceSale } from "../webhooks/sale-status";
import { existingSale } from "./admin";

const unavailable = errorResponses("UNAVAILABLE")[503] as ReturnType<typeof errorResponses>[number] & {
  headers: Record<string, unknown>;
};

/** The key the adjustment went under: the request's, or the one the server made up for it. */
const keyHeader = {
  description:
    "The adjustment's Idempotency-Key: the request's, or one the server made up when it sent none. Send the adjustment again with it to apply it once.",
  schema: { type: "string" as const, example: "2b1f0c7e-6a1d-4f3e-9c55-0d3a8e1b7f42" },
};

export const adjustStockRoute = createRoute({
  method: "post",
  path: "/sales/{saleId}/stock",
  tags: ["Operator"],
  security: OPERATOR,
  summary: "Add or remove stock",
  description:
    "Grows or shrinks the stock of one variant, live sales included, never below what is reserved of it (409 CONFLICT with `remaining`, the most that can be removed, and `variantId`). `variantId` is required on a sale of several variants (400 INVALID_REQUEST without it, 400 UNKNOWN_VARIANT for one the sale does not have); on a sale of one it may be left out. The variant's units and the sale's change together. With an `Idempotency-Key` a retried adjustment is applied once, whatever failed in between. Without one the server makes one up and answers it in the `Idempotency-Key` response header: after a 503, sending the adjustment again with that key applies it once. An adjustment a 503 left applied in Redis only is recorded in Postgres by the reconciliation or the next rebuild, never dropped or counted twice. The body (at most 16 KiB) is read as JSON whatever its Content-Type.",
  middleware: [jsonBody({ maxBytes: MAX_ADMIN_BODY_BYTES })] as const,
  request: {
    params: saleIdParam,
    headers: stockHeaders,
    body: { required: true, content: { "application/json": { schema: stockBodySchema } } },
  },
  responses: {
    200: {
      ...json("The sale with its new stock and remaining units.", operatorSaleSchema),
      headers: { "Idempotency-Key": keyHeader },
    },
    ...errorResponses(
      "INVALID_REQUEST",
      "UNKNOWN_VARIANT",
      "UNAUTHENTICATED",
      "FORBIDDEN",
      "UNKNOWN_SALE",
      "CONFLICT",
    ),
    503: { ...unavailable, headers: { ...unavailable.headers, "Idempotency-Key": keyHeader } },
  },
});

type Refusal =
  | Exclude<AdjustmentResult, { kind: "applied" }>
  /** an adjustment sent without a key that met a store failure: it may have been applied */
  | { kind: "outcome_unknown"; key: string };

/** The one table from a refused stock adjustment to the contract's error. */
function refusal(r: Refusal): ApiError {
  switch (r.kind) {
    case "below_reserved":
      return new ApiError(
        "CONFLICT",
        `Stock of ${r.variantId} cannot go below what is reserved: at most ${r.remaining} can be removed.`,
        { details: { remaining: r.remaining, variantId: r.variantId } },
      );
    case "key_reused":
      return new ApiError(
        "CONFLICT",
        r.appliedVariant === undefined
          ? `This Idempotency-Key was already used for an adjustment of ${r.appliedDelta}; use a new key.`
          : `This Idempotency-Key was already used for an adjustment of ${r.appliedDelta} to ${r.appliedVariant}; use a new key.`,
        {
          details: {
            appliedDelta: r.appliedDelta,
            ...(r.appliedVariant === undefined ? {} : { variantId: r.appliedVariant }),
          },
        },
      );
    case "variant_required":
      return new ApiError(
        "INVALID_REQUEST",
        `This sale has several variants: say which one in variantId (${r.variantIds.join(", ")}).`,
        { details: { fields: { variantId: "Required on a sale of several variants." } } },
      );
    case "unknown_variant":
      return new ApiError("UNKNOWN_VARIANT", `This sale has no variant ${r.variantId}.`, {
        details: { variantId: r.variantId },
      });
    case "not_initialised":
      return new ApiError("UNAVAILABLE", "The sale is being restored; nothing was adjusted.", {
        retryAfterSeconds: 2,
      });
    case "rebuilding":
      return new ApiError(
        "UNAVAILABLE",
        "The sale is being restored; the adjustment may have been applied (the rebuild then records it). Send it again with the same Idempotency-Key to apply it once.",
        { retryAfterSeconds: 2 },
      );
    case "outcome_unknown":
      return new ApiError(
        "UNAVAILABLE",
        `A store is temporarily unavailable; the adjustment may have been applied (the reconciliation or the next rebuild then records it). Send it again with Idempotency-Key: ${r.key} (this answer's header) to apply it once.`,
        { retryAfterSeconds: 2 },
      );
  }
}

/**
 * `POST /api/admin/sales/:saleId/stock {"delta", "variantId"?}` (operator token, checked by the app):
 * applies the adjustment to the variant (required on a sale of several) once per Idempotency-Key in both stores (sale/stock-adjustment.ts) and answers the sale
 * with its new figures. A request without a key gets one made up (a random UUID), so every adjustment
 * takes the keyed path; the key is answered in the `Idempotency-Key` header, for a safe retry.
 */
async function adjustSaleStock(c: RouteContext<typeof adjustStockRoute>) {
  const d = deps(c);
  const { delta, variantId } = c.req.valid("json");
  const sent = c.req.valid("header")["Idempotency-Key"] ?? null;
  const idempotencyKey = sent ?? crypto.randomUUID();
  c.header("Idempotency-Key", idempotencyKey);
  const sale = await existingSale(d, c.req.valid("param").saleId);
  const request = { delta, idempotencyKey, ...(variantId === undefined ? {} : { variantId }) };
  const outcome = await applyStockAdjustment(d, sale, request, auditActor(c)).catch(
    (error: unknown): Refusal => {
      if (sent !== null || !(error instanceof StoreUnavailableError)) throw error;
      return { kind: "outcome_unknown", key: idempotencyKey };
    },
  );
  if (outcome.kind !== "applied") throw refusal(outcome);
  forgetSaleList(d.memory);
  const variants = variantsOfSale(sale).map((v) =>
    v.variantId === outcome.variantId ? { ...v, remaining: outcome.variantRemaining } : v,
  );
  const adjusted = toSaleView(
    { ...sale, remaining: outcome.remaining, stock: outcome.stock, variants },
    d.now,
    "operator",
  );
  await announceSale(d, sale.saleId, "sale.stock_adjusted");
  return c.json(adjusted, 200);
}

export const adminStockRoutes = apiRouter().openapi(adjustStockRoute, adjustSaleStock);
