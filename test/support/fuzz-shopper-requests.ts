/**
 * The shopper's routes fuzzed: buy bodies, Idempotency-Keys and product tokens, and the order routes
 * (get, pay, cancel) with odd ids, actions and bodies. A buy body the route would accept goes out with a
 * bad shopper token, so every request here is refused before it can change a store.
 */
import fc from "fast-check";
import type { FuzzContext, FuzzRequest } from "./fuzz-request";
import {
  anyJson,
  badBearer,
  badUtf8,
  contentType,
  hugeNumber,
  jsonText,
  orderIds,
  oversized,
  segment,
} from "./fuzz-values";

/** Whether the buy route would accept this body text (then the request must fail auth instead). */
export function buyBodyAccepted(text: string): boolean {
  const decoded = text.replace(/^\ufeff/, "");
  if (decoded.trim() === "") return true;
  try {
    const v = JSON.parse(decoded);
    if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
    if (!("quantity" in v)) return true;
    return Number.isInteger(v.quantity) && v.quantity >= 1 && v.quantity <= 10_000;
  } catch {
    return false;
  }
}

/** POST /api/buy/:token with odd bodies, content types and shopper tokens. */
export function buyBodies(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const buyBody = fc.oneof(
    jsonText,
    hugeNumber.map((q) => `{"quantity":${JSON.stringify(q)}}`),
    anyJson.map((q) => JSON.stringify({ quantity: q })),
    oversized,
  );
  return fc
    .record({
      body: fc.oneof(buyBody, badUtf8),
      ct: contentType,
      auth: fc.oneof(fc.constant(`Bearer ${ctx.shopper}`), badBearer),
    })
    .map(({ body, ct, auth }): FuzzRequest => {
      const accepted = typeof body === "string" && buyBodyAccepted(body);
      return {
        label: "buy body",
        method: "POST",
        path: `/api/buy/${ctx.productToken}`,
        headers: { "Content-Type": ct, Authorization: accepted ? "Bearer not.a.token" : auth },
        body,
      };
    });
}

/** Idempotency-Keys always invalid, even after fetch trims the header and non-ASCII becomes "?". */
export function buyKeys(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  return fc
    .oneof(
      fc.string({ maxLength: 40 }).map((k) => `k k${k}`),
      fc.stringMatching(/^[a-z0-9]{129,300}$/),
    )
    .map(
      (key): FuzzRequest => ({
        label: "buy idempotency key",
        method: "POST",
        path: `/api/buy/${ctx.productToken}`,
        headers: {
          "Content-Type": "application/json",
          Authorization: `Bearer ${ctx.shopper}`,
          "Idempotency-Key": key,
        },
        body: "{}",
      }),
    );
}

/** A valid buy body on an odd product token. */
export function buyTokens(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  return fc.record({ token: segment, auth: fc.oneof(fc.constant(`Bearer ${ctx.shopper}`), badBearer) }).map(
    ({ token, auth }): FuzzRequest => ({
      label: "buy product token",
      method: "POST",
      path: `/api/buy/${token}`,
      headers: { "Content-Type": "application/json", Authorization: auth },
      body: '{"quantity":1}',
    }),
  );
}

/** GET /api/orders/:id and its actions, with odd ids, actions, tokens and bodies. */
export function orderRequests(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      id: orderIds(ctx.orderIdLike),
      action: fc.constantFrom("", "/pay", "/cancel", "/refund", "/../pay"),
      auth: fc.oneof(fc.constant(`Bearer ${ctx.shopper}`), badBearer),
      body: fc.option(fc.oneof(jsonText, oversized, badUtf8)),
    })
    .map(
      ({ id, action, auth, body }): FuzzRequest => ({
        label: `order${action || " get"}`,
        method: action ? "POST" : "GET",
        path: `/api/orders/${encodeURIComponent(id) || "x"}${action}`,
        headers: { Authorization: auth, "Content-Type": "application/json" },
        ...(action && body !== null ? { body } : {}),
      }),
    );
}
