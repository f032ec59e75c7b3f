import type { MiddlewareHandler } from "hono";
import { verify } from "hono/jwt";
import { ApiError } from "../errors";

export type ShopperVariables = { userId: string };

const MAX_USER_ID_LENGTH = 128;
const keys = new Map<string, Promise<CryptoKey>>();

/** The HS256 key, imported once per isolate (hono/jwt would import it again on every call). */
function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["verify"],
    );
    keys.set(secret, key);
  }
  return key;
}

/**
 * Reads the shopper from `Authorization: Bearer <JWT>`: HS256 only (an `alg: none` or RS256 header is
 * refused), `exp`/`nbf` checked, `sub` required. Anything else is 401 UNAUTHENTICATED.
 *
 * @example
 * app.get("/api/orders/:id", shopperAuth({ secret: () => config.JWT_SECRET }), handler)
 */
export function shopperAuth(options: { secret: (c: Parameters<MiddlewareHandler>[0]) => string }) {
  return async function shopperAuthMiddleware(c, next) {
    c.set("userId", await authenticateShopper(c.req.header("Authorization"), options.secret(c)));
    await next();
  } satisfies MiddlewareHandler<{ Variables: ShopperVariables }>;
}

/** The user id in a shopper token, or throws 401. */
export async function authenticateShopper(header: string | undefined, secret: string): Promise<string> {
  const token = /^Bearer ([A-Za-z0-9_\-.]+)$/.exec(header ?? "")?.[1];
  if (!token)
    throw new ApiError(
      "UNAUTHENTICATED",
      "Sign in: a shopper token (Authorization: Bearer <JWT>) is required.",
    );
  let payload: Record<string, unknown>;
  try {
    payload = await verify(token, await hmacKey(secret), "HS256");
  } catch {
    throw new ApiError("UNAUTHENTICATED", "The shopper token is invalid or expired.");
  }
  const sub = payload.sub;
  if (typeof sub !== "string" || sub.length === 0 || sub.length > MAX_USER_ID_LENGTH) {
    throw new ApiError("UNAUTHENTICATED", "The shopper token has no valid subject (sub).");
  }
  return sub;
}
