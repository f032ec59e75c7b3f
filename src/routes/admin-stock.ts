import { createRoute } from "@hono/zod-openapi";
import {
  MAX_ADMIN_BODY_BYTES,
  operatorSaleSchema,
  stockBodySchema,
  stockHeaders,
} from "../api/admin-schemas";
import { apiRouter, json, OPERATOR } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { jsonBody } from "../api/json-body";
import { saleIdParam } from "../api/sale-schemas";
import { toSaleView } from "../catalog/sale-record";
import { forgetSaleList } from "../catalog/sale-store";
import { deps } from "../context";
import { ApiError, StoreUnavailableError } from "../errors";
import { type AdjustmentResult, applyStockAdjustment } from "../sales/stock-adjustment";
import { existingSale } from "./admin";

export const adjustStockRoute = createRoute({
  method: "post",
  path: "/sales/{saleId}/stock",
  tags: ["Operator"],
  security: OPERATOR,
  summary: "Add or remove stock",
  description:
    "Grows or shrinks the stock, live sales included, never below what is reserved (409 CONFLICT with `remaining`, the most that can be removed). With an `Idempotency-Key` a retried adjustment is applied once, whatever failed in between; without one, a 503 cannot say whether it was applied. The body (at most 16 KiB) is read as JSON whatever its Content-Type.",
  middleware: [jsonBody({ maxBytes: MAX_ADMIN_BODY_BYTES })] as const,
  request: {
    params: saleIdParam,
    headers: stockHeaders,
    body: { required: true, content: { "application/json": { schema: stockBodySchema } } },
  },
  responses: {
    200: json("The sale with its new stock and remaining units.", operatorSaleSchema),
    ...errorResponses("INVALID_REQUEST", "UNAUTHENTICATED", "UNKNOWN_SALE", "CONFLICT", "UNAVAILABLE"),
  },
});

type Refusal =
  | Exclude<AdjustmentResult, { kind: "applied" }>
  /** an adjustment without a key that met a store failure: it may have been applied */
  | { kind: "outcome_unknown" };

/** The one table from a refused stock adjustment to the contract's error. */
function refusal(r: Refusal): ApiError {
  switch (r.kind) {
    case "below_reserved":
      return new ApiError(
        "CONFLICT",
        `Stock cannot go below what is reserved: at most ${r.remaining} can be removed.`,
        { details: { remaining: r.remaining } },
      );
    case "key_reused":
      return new ApiError(
        "CONFLICT",
        `This Idempotency-Key was already used for an adjustment of ${r.appliedDelta}; use a new key.`,
        { details: { appliedDelta: r.appliedDelta } },
      );
    case "not_initialised":
    case "rebuilding":
      return new ApiError("UNAVAILABLE", "The sale is being restored.", { retryAfterSeconds: 2 });
    case "outcome_unknown":
      return new ApiError(
        "UNAVAILABLE",
        "A store is temporarily unavailable; the adjustment may have been applied (the reconciliation then records it). Send it with an Idempotency-Key to retry it safely.",
        { retryAfterSeconds: 2 },
      );
  }
}

/**
 * `POST /api/admin/sales/:saleId/stock {"delta"}` (operator token, checked by the app): applies the
 * adjustment once per Idempotency-Key in both stores (sale/stock-adjustment.ts) and answers the sale
 * with its new figures. A store failure without a key cannot be retried safely, and says so.
 */
export const adminStockRoutes = apiRouter().openapi(adjustStockRoute, async (c) => {
  const d = deps(c);
  const { delta } = c.req.valid("json");
  const idempotencyKey = c.req.valid("header")["Idempotency-Key"] ?? null;
  const sale = await existingSale(d, c.req.valid("param").saleId);
  const outcome = await applyStockAdjustment(d, sale, { delta, idempotencyKey }).catch(
    (error: unknown): Refusal => {
      if (idempotencyKey !== null || !(error instanceof StoreUnavailableError)) throw error;
      return { kind: "outcome_unknown" };
    },
  );
  if (outcome.kind !== "applied") throw refusal(outcome);
  forgetSaleList(d.memory);
  const adjusted = { ...sale, remaining: outcome.remaining, stock: outcome.stock };
  return c.json(toSaleView(adjusted, d.now, "operator"), 200);
});
