/**
 * The operator's and QStash's routes fuzzed: invalid sale definitions and stock deltas, bad operator
 * tokens, unknown sales, and job bodies unsigned, badly signed or signed but of a shape the job routes
 * must refuse.
 */
import fc from "fast-check";
import { type FuzzContext, type FuzzRequest, safeHeader } from "./fuzz-request";
import {
  anyJson,
  badBearer,
  contentType,
  hugeNumber,
  jsonText,
  orderIds,
  segment,
  weird,
} from "./fuzz-values";

/** POST /api/admin/sales and …/stock with invalid definitions and deltas. */
export function adminBodies(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const invalidSale = anyJson.map((v) => ({
    ...(typeof v === "object" && v !== null && !Array.isArray(v) ? v : { v }),
    stock: "lots",
  }));
  return fc
    .record({
      route: fc.constantFrom("/sales", `/sales/${ctx.saleId}/stock`, `/sales/${ctx.saleId}/stock`),
      body: fc.oneof(
        invalidSale.map((v) => JSON.stringify(v)),
        hugeNumber
          .filter((d) => !Number.isInteger(d) || d === 0 || Math.abs(d) > 10_000_000)
          .map((d) => `{"delta":${JSON.stringify(d)}}`),
        anyJson.filter((v) => typeof v !== "number").map((d) => JSON.stringify({ delta: d })),
        fc.constantFrom("{", "[]", '"x"', "x".repeat(20_000)),
      ),
      ct: contentType,
    })
    .map(
      ({ route, body, ct }): FuzzRequest => ({
        label: `admin ${route.includes("stock") ? "stock" : "create"} body`,
        method: "POST",
        path: `/api/admin${route}`,
        headers: { Authorization: `Bearer ${ctx.admin}`, "Content-Type": ct },
        body,
      }),
    );
}

/** Every operator route with a bad operator token. */
export function adminAuth(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      route: fc.constantFrom(
        "/sales",
        `/sales/${ctx.saleId}`,
        `/sales/${ctx.saleId}/pause`,
        `/sales/${ctx.saleId}/reconcile`,
        `/sales/${ctx.saleId}/stock`,
        "/dead-letters",
      ),
      method: fc.constantFrom("GET", "POST"),
      auth: badBearer,
    })
    .map(
      ({ route, method, auth }): FuzzRequest => ({
        label: "admin auth",
        method,
        path: `/api/admin${route}`,
        headers: { Authorization: auth, "Content-Type": "application/json" },
        ...(method === "POST" ? { body: '{"delta":5}' } : {}),
      }),
    );
}

/** The stats of a sale that does not exist. */
export function adminUnknownSale(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  return segment.map(
    (id): FuzzRequest => ({
      label: "admin unknown sale",
      method: "GET",
      path: `/api/admin/sales/${id}/stats`,
      headers: { Authorization: `Bearer ${ctx.admin}` },
    }),
  );
}

/** POST /api/jobs/* with odd bodies, unsigned, badly signed, or signed when the shape must be refused. */
export function jobRequests(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const jobShape = fc.oneof(
    anyJson.map((v) => JSON.stringify(v)),
    fc.array(anyJson, { maxLength: 3 }).map((orders) => JSON.stringify({ orders })),
    fc
      .record({
        orderId: fc.oneof(orderIds(ctx.orderIdLike), fc.constant(ctx.orderIdLike)),
        saleId: fc.oneof(weird, fc.constant("s000000000000")),
        userId: fc.oneof(fc.integer(), fc.constant(null)),
        quantity: fc.oneof(hugeNumber, fc.string()),
      })
      .map((j) => JSON.stringify(j)),
    jsonText,
  );
  return fc
    .record({
      route: fc.constantFrom("order-write", "payment-timeout", "failed", "nope"),
      body: jobShape,
      signature: fc.oneof(fc.constant(null), weird, fc.constant("sign")),
    })
    .map(
      ({ route, body, signature }): FuzzRequest => ({
        label: `job ${route}${signature === "sign" ? " signed" : ""}`,
        method: "POST",
        path: `/api/jobs/${route}`,
        headers: {
          "Content-Type": "application/json",
          ...(signature && signature !== "sign" ? { "Upstash-Signature": safeHeader(signature) } : {}),
        },
        body,
        // a signed failure callback is any object QStash sends: it would be recorded, so it is not signed here
        signJob: signature === "sign" && route !== "failed",
      }),
    );
}
