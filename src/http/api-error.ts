import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { DatabaseRefusedError, SaleLostError, StoreUnavailableError } from "../errors";

/** Every error code the API answers with; the contract's table lives in {@link statusOf}. */
export type ErrorCode =
  | "INVALID_REQUEST"
  | "UNAUTHENTICATED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "UNKNOWN_PRODUCT"
  | "UNKNOWN_VARIANT"
  | "UNKNOWN_SALE"
  | "UNKNOWN_ORDER"
  | "SALE_NOT_STARTED"
  | "SALE_ENDED"
  | "SALE_PAUSED"
  | "ALREADY_PURCHASED"
  | "LIMIT_EXCEEDED"
  | "INSUFFICIENT_STOCK"
  | "SOLD_OUT"
  | "RATE_LIMITED"
  | "ORDER_EXPIRED"
  | "ORDER_CANCELLED"
  | "ORDER_PAID"
  | "ORDER_NOT_READY"
  | "CHECKOUT_REQUIRED"
  | "CONFLICT"
  | "PAYLOAD_TOO_LARGE"
  | "HEADERS_TOO_LARGE"
  | "UNAVAILABLE"
  | "DELIVERY_FAILED"
  | "INTERNAL"
  | "NOT_ADMITTED"
  | "CHALLENGE_FAILED"
  | "NO_QUEUE"
  | "NO_TICKET"
  | "ENTRIES_CLOSED";

/** The one table from error code to HTTP status. */
export function statusOf(code: ErrorCode): ContentfulStatusCode {
  switch (code) {
    case "INVALID_REQUEST":
    case "UNKNOWN_VARIANT":
      return 400;
    case "UNAUTHENTICATED":
      return 401;
    case "NOT_FOUND":
    case "UNKNOWN_PRODUCT":
    case "UNKNOWN_SALE":
    case "UNKNOWN_ORDER":
      return 404;
    case "METHOD_NOT_ALLOWED":
      return 405;
    case "FORBIDDEN":
    case "NOT_ADMITTED":
    case "CHALLENGE_FAILED":
      return 403;
    case "NO_TICKET":
      return 404;
    case "NO_QUEUE":
    case "ENTRIES_CLOSED":
      return 409;
    case "SALE_NOT_STARTED":
    case "SALE_ENDED":
    case "SALE_PAUSED":
    case "ALREADY_PURCHASED":
    case "LIMIT_EXCEEDED":
    case "INSUFFICIENT_STOCK":
    case "ORDER_EXPIRED":
    case "ORDER_CANCELLED":
    case "ORDER_PAID":
    case "ORDER_NOT_READY":
    case "CHECKOUT_REQUIRED":
    case "CONFLICT":
      return 409;
    case "SOLD_OUT":
      return 410;
    case "PAYLOAD_TOO_LARGE":
      return 413;
    case "HEADERS_TOO_LARGE":
      return 431;
    case "RATE_LIMITED":
      return 429;
    case "UNAVAILABLE":
      return 503;
    case "DELIVERY_FAILED":
      return 502;
    case "INTERNAL":
      return 500;
  }
}

/** Codes always answered with a `Retry-After` header (2 s unless the error says otherwise). */
export const RETRY_AFTER_CODES: ReadonlySet<ErrorCode> = new Set([
  "RATE_LIMITED",
  "ORDER_NOT_READY",
  "UNAVAILABLE",
]);

/** Extra fields an error body may carry next to code and message (e.g. `remaining`). */
export type ErrorDetails = Record<
  string,
  string | number | boolean | null | Record<string, string> | { variantId: string; remaining: number }[]
>;

/**
 * An expected failure to answer with: thrown by routes and middleware, rendered by {@link renderError}.
 *
 * @example
 * throw new ApiError("SOLD_OUT", "This sale is sold out.");
 * throw new ApiError("RATE_LIMITED", "Too many attempts.", { retryAfterSeconds: 2 });
 */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: { retryAfterSeconds?: number; details?: ErrorDetails } = {},
  ) {
    super(message);
  }
}

/** Renders the contract's error body `{ error: { code, message, ...details, requestId } }`, with Retry-After if given. */
export function renderError(c: Context, error: ApiError): Response {
  const { details } = error.options;
  const retryAfterSeconds =
    error.options.retryAfterSeconds ?? (RETRY_AFTER_CODES.has(error.code) ? 2 : undefined);
  if (retryAfterSeconds !== undefined)
    c.header("Retry-After", String(Math.max(1, Math.ceil(retryAfterSeconds))));
  const context = c as Context<{ Variables: { requestId?: string; errorCode?: string } }>;
  const requestId = context.get("requestId");
  context.set("errorCode", error.code); // for the request's log line
  return c.json(
    { error: { code: error.code, message: error.message, ...details, requestId } },
    statusOf(error.code),
  );
}

/** Turns anything thrown into an ApiError without leaking internals to the client. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof SaleLostError) {
    return new ApiError("UNAVAILABLE", "The sale is being restored. Try again shortly.", {
      retryAfterSeconds: 2,
    });
  }
  if (error instanceof StoreUnavailableError) {
    return new ApiError("UNAVAILABLE", "A store is temporarily unavailable. Try again shortly.", {
      retryAfterSeconds: 2,
    });
  }
  if (error instanceof DatabaseRefusedError) {
    return error.reason === "conflict"
      ? new ApiError("CONFLICT", "The change conflicts with what the database holds; nothing was written.")
      : new ApiError("INVALID_REQUEST", "A value is out of range; nothing was written.");
  }
  return new ApiError("INTERNAL", "Something went wrong on our side.");
}
