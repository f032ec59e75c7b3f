import { ApiError } from "../errors";

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
