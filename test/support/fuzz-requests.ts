/**
 * Malformed requests for every route, as fast-check arbitraries: random JSON, wrong types, huge
 * numbers, unicode, oversized bodies, invalid UTF-8, wrong methods and content types, bad tokens and
 * signatures; and, given `fromSchemas`, requests drawn from the OpenAPI document's request schemas (see
 * fuzz-from-schemas.ts). Every request built here must be refused before it can change a store: bodies
 * the buy route would accept go out with a bad shopper token, job bodies are unsigned or malformed,
 * operator bodies are invalid definitions, and schema-drawn requests break their schema.
 */
import fc from "fast-check";
import { adminAuth, adminBodies, adminUnknownSale, jobRequests } from "./fuzz-operator-requests";
import { type FuzzContext, type FuzzRequest, safeHeader } from "./fuzz-request";
import { buyBodies, buyKeys, buyTokens, orderRequests } from "./fuzz-shopper-requests";
import { jsonText, segment } from "./fuzz-values";

export { buyBodyAccepted } from "./fuzz-shopper-requests";
export type { FuzzContext, FuzzRequest };
export { safeHeader };

/** Every route's malformed requests, weighted, each header made sendable. */
export function fuzzRequests(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  return fc
    .oneof(
      { arbitrary: buyBodies(ctx), weight: 4 },
      { arbitrary: buyKeys(ctx), weight: 1 },
      { arbitrary: buyTokens(ctx), weight: 2 },
      { arbitrary: orderRequests(ctx), weight: 3 },
      { arbitrary: adminBodies(ctx), weight: 2 },
      { arbitrary: adminAuth(ctx), weight: 1 },
      { arbitrary: adminUnknownSale(ctx), weight: 1 },
      { arbitrary: jobRequests(ctx), weight: 3 },
      { arbitrary: wrongMethods(ctx), weight: 1 },
      { arbitrary: randomPaths, weight: 1 },
      { arbitrary: salesById, weight: 1 },
      { arbitrary: devLogins, weight: 1 },
      ...(ctx.fromSchemas ? [{ arbitrary: ctx.fromSchemas, weight: 9 }] : []),
    )
    .map((req) => ({
      ...req,
      headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, safeHeader(v, true)])),
    }));
}

/** A method no route takes, on every route. */
function wrongMethods(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      method: fc.constantFrom("PUT", "DELETE", "PATCH", "OPTIONS"),
      path: fc.constantFrom(
        `/api/buy/${ctx.productToken}`,
        `/api/orders/${ctx.orderIdLike}`,
        `/api/orders/${ctx.orderIdLike}/pay`,
        "/api/sales",
        `/api/admin/sales/${ctx.saleId}`,
        "/api/jobs/order-write",
        "/api/health",
        "/api/dev/login",
      ),
      auth: fc.constantFrom(`Bearer ${ctx.shopper}`, `Bearer ${ctx.admin}`, ""),
    })
    .map(
      ({ method, path, auth }): FuzzRequest => ({
        label: `wrong method ${method}`,
        method,
        path,
        headers: { Authorization: auth },
        body: "{}",
      }),
    );
}

const randomPaths = fc.record({ a: segment, b: fc.option(segment) }).map(
  ({ a, b }): FuzzRequest => ({
    label: "random path",
    method: "GET",
    path: `/api/${a}${b ? `/${b}` : ""}`,
    headers: {},
  }),
);
const salesById = segment.map(
  (id): FuzzRequest => ({ label: "sale by id", method: "GET", path: `/api/sales/${id}`, headers: {} }),
);
const devLogins = jsonText.map(
  (body): FuzzRequest => ({
    label: "dev login (disabled)",
    method: "POST",
    path: "/api/dev/login",
    headers: { "Content-Type": "application/json" },
    body,
  }),
);
