/**
 * Routes' own descriptions (schemas and body middleware, as the engine runs them) in front of handlers
 * that echo what passed: the request checks alone, for the unit tests and bench/micro.ts.
 *
 * @example
 * const res = await buyEcho().request(`/${token}`, { method: "POST", body: '{"quantity":2}' });
 * (await res.json()).quantity; // 2
 */
import { apiRouter } from "../../src/api/api-router";
import { renderError, toApiError } from "../../src/http/api-error";
import { createSaleRoute } from "../../src/routes/admin";
import { adjustStockRoute } from "../../src/routes/admin-stock";
import { buyRoute } from "../../src/routes/buy";

/** The buy route: answers the quantity, the Idempotency-Key (or null) and the product token that passed. */
export function buyEcho() {
  return apiRouter()
    .openapi(
      buyRoute,
      (c) =>
        c.json({
          quantity: c.req.valid("json").quantity,
          key: c.req.valid("header")["Idempotency-Key"] ?? null,
          token: c.req.valid("param").productToken,
        }) as never,
    )
    .onError((error, c) => renderError(c, toApiError(error)));
}

/** The operator's create-sale and adjust-stock routes: the definition, or the delta and key, that passed. */
export function operatorEcho() {
  return apiRouter()
    .openapi(createSaleRoute, (c) => c.json(c.req.valid("json") as never, 201))
    .openapi(
      adjustStockRoute,
      (c) =>
        c.json({
          delta: c.req.valid("json").delta,
          key: c.req.valid("header")["Idempotency-Key"] ?? null,
        }) as never,
    )
    .onError((error, c) => renderError(c, toApiError(error)));
}
