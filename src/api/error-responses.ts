import { z } from "@hono/zod-openapi";
import { type ErrorCode, RETRY_AFTER_CODES, statusOf } from "../http/api-error";

/** What each error code means, as the document tells a client (and its generator) about it. */
const MEANING: Record<ErrorCode, string> = {
  INVALID_REQUEST: "The request is malformed: bad JSON, a body that is not an object, a value out of range.",
  UNAUTHENTICATED: "No or a bad credential for this route.",
  FORBIDDEN: "The operator's role may only read (GET); this route changes something.",
  NOT_FOUND: "No such route.",
  METHOD_NOT_ALLOWED: "The route does not take this method.",
  UNKNOWN_PRODUCT: "No sale sells this product token; no stock was touched.",
  UNKNOWN_VARIANT: "The sale has no variant with this id (`variantId`); nothing was reserved.",
  UNKNOWN_SALE: "No such sale.",
  UNKNOWN_ORDER: "No such order for this shopper (another shopper's order is answered the same way).",
  SALE_NOT_STARTED: "The sale has not started yet.",
  SALE_ENDED: "The sale has ended.",
  SALE_PAUSED: "The shop paused the sale.",
  ALREADY_PURCHASED: "The shopper already holds the most units one shopper may buy (`held`).",
  LIMIT_EXCEEDED: "More units than the shopper may still buy (`mayStillBuy`).",
  INSUFFICIENT_STOCK:
    "Some stock is left, less than asked (`remaining`; for a cart, `variants` names every short line with what its variant has left).",
  SOLD_OUT: "Nothing is left.",
  RATE_LIMITED: "Too many attempts from this shopper or address; wait `Retry-After` seconds.",
  ORDER_EXPIRED: "The order's payment window closed; its units went back to the sale.",
  ORDER_CANCELLED: "The order was cancelled.",
  ORDER_PAID: "The order is paid and can no longer be cancelled.",
  ORDER_NOT_READY: "The order is not ready for this yet; retry after `Retry-After` seconds.",
  CHECKOUT_REQUIRED:
    "A payment provider decides `paid` here: ask for a checkout (POST /api/orders/{orderId}/checkout) and pay there.",
  CONFLICT: "The request conflicts with the current state (see the message).",
  PAYLOAD_TOO_LARGE: "The body is larger than the route takes.",
  HEADERS_TOO_LARGE: "The request's headers together are larger than 32 KiB; nothing was read.",
  UNAVAILABLE:
    "A store or the shop's sign-in key set is unavailable, or the sale is being restored; retry after `Retry-After` seconds.",
  DELIVERY_FAILED:
    "A webhook endpoint did not answer 2xx; QStash delivers the job again with its backoff (no Retry-After).",
  INTERNAL: "Something failed on the server's side.",
  NOT_ADMITTED:
    "The sale admits through its queue or draw, and the `Admission` header is missing, invalid, for another sale or shopper, or lapsed.",
  CHALLENGE_FAILED: "The sale asks for a proof of work to join, and the solution is missing or wrong.",
  NO_QUEUE: "The sale admits everyone at once: it has no queue.",
  NO_TICKET: "This shopper has no ticket for the sale's queue.",
  ENTRIES_CLOSED: "The draw took its entries until the sale's start.",
};

/**
 * The contract's error body `{"error": {"code", "message", ...details, "requestId"}}` for the given codes. Details are
 * named one by one (no other field may appear), so the document says exactly what a client can read.
 */
export function errorBodySchema(codes: readonly [ErrorCode, ...ErrorCode[]]) {
  return z.strictObject({
    error: z.strictObject({
      code: z.enum(codes),
      message: z.string().openapi({ description: "A sentence a person can act on." }),
      fields: z.record(z.string(), z.string()).optional().openapi({
        description: "INVALID_REQUEST: what is wrong with each named input (`body` for the whole).",
      }),
      retryAfterSeconds: z.int().min(1).optional().openapi({ description: "RATE_LIMITED: seconds to wait." }),
      remaining: z
        .int()
        .min(0)
        .optional()
        .openapi({ description: "Units left (INSUFFICIENT_STOCK, CONFLICT)." }),
      variants: z
        .array(z.strictObject({ variantId: z.string(), remaining: z.int().min(0) }))
        .optional()
        .openapi({
          description: "INSUFFICIENT_STOCK of a drop: every short line and what its variant has left.",
        }),
      held: z.int().min(0).optional().openapi({ description: "ALREADY_PURCHASED: units the shopper holds." }),
      mayStillBuy: z.int().min(0).optional().openapi({ description: "LIMIT_EXCEEDED: units still allowed." }),
      appliedDelta: z
        .int()
        .optional()
        .openapi({ description: "CONFLICT: the delta this key already applied." }),
      variantId: z.string().optional().openapi({
        description:
          "UNKNOWN_VARIANT: the variant asked for; CONFLICT of a stock adjustment: the variant it is about (for a key already used, the variant that key adjusted).",
      }),
      saleId: z
        .string()
        .nullable()
        .optional()
        .openapi({ description: "CONFLICT: the product's existing sale." }),
      requestId: z.string().openapi({
        description:
          "The request's id, also in the `X-Request-Id` header of every response: the caller's own if it sent a well-formed one (1 to 128 of `A-Z a-z 0-9 . _ : + / = -`), else a new one. Quote it when reporting a problem.",
      }),
    }),
  });
}

/** `Retry-After`, required where every code of the status sends it (429, 503), optional where only some do (409). */
const retryAfterHeader = (required: boolean) => ({
  "Retry-After": {
    description: "Seconds to wait before retrying (a whole number, at least 1).",
    required,
    schema: { type: "string" as const, pattern: "^[1-9][0-9]*$" },
  },
});

/**
 * The `responses` entries of a route's errors: one per status, each listing the codes it can carry and
 * their meaning, with `Retry-After` where the code sends one. Every route also answers 431
 * HEADERS_TOO_LARGE (src/middleware/header-limit.ts) and 500 INTERNAL.
 *
 * @example
 * responses: { 200: ok(saleSchema), ...errorResponses("UNKNOWN_SALE", "UNAVAILABLE") }
 */
export function errorResponses(...codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, "HEADERS_TOO_LARGE" as const, "INTERNAL" as const]) {
    const status = statusOf(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<
    number,
    {
      description: string;
      headers?: ReturnType<typeof retryAfterHeader>;
      content: { "application/json": { schema: ReturnType<typeof errorBodySchema> } };
    }
  > = {};
  for (const [status, list] of byStatus) {
    const [first, ...rest] = list as [ErrorCode, ...ErrorCode[]];
    responses[status] = {
      description: list.map((code) => `\`${code}\`: ${MEANING[code]}`).join("\n\n"),
      ...(list.some((code) => RETRY_AFTER_CODES.has(code))
        ? { headers: retryAfterHeader(list.every((code) => RETRY_AFTER_CODES.has(code))) }
        : {}),
      content: { "application/json": { schema: errorBodySchema([first, ...rest]) } },
    };
  }
  return responses;
}
