import { ApiError } from "../errors";
import { parseJsonObject } from "../http/read-body";

export const MAX_BUY_BODY_BYTES = 1024;
export const MAX_QUANTITY = 10_000;

/** `{"quantity": n}` with n an integer from 1 to 10,000; an empty body means 1. */
export function parseBuyBody(text: string): { quantity: number } {
  const body = parseJsonObject(text);
  const quantity = "quantity" in body ? body.quantity : 1;
  if (
    typeof quantity !== "number" ||
    !Number.isInteger(quantity) ||
    quantity < 1 ||
    quantity > MAX_QUANTITY
  ) {
    throw new ApiError("INVALID_REQUEST", `quantity must be an integer from 1 to ${MAX_QUANTITY}.`);
  }
  return { quantity };
}

/** Idempotency-Key: 1–128 visible ASCII characters, or absent. */
export function parseIdempotencyKey(header: string | undefined): string | null {
  if (header === undefined) return null;
  if (!/^[\x21-\x7e]{1,128}$/.test(header)) {
    throw new ApiError("INVALID_REQUEST", "Idempotency-Key must be 1 to 128 visible ASCII characters.");
  }
  return header;
}

/** The client address for per-IP limits (CF-Connecting-IP, set by Cloudflare's edge). */
export function clientIp(header: string | undefined): string {
  const ip = header?.trim();
  return ip && ip.length <= 64 ? ip : "unknown";
}
