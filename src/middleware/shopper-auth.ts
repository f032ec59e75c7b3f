import type { MiddlewareHandler } from "hono";
import { decodeProtectedHeader } from "jose";
import type { ShopperVariables } from "../context";
import { ApiError } from "../http/api-error";
import { verifyWithKeySet } from "../identity/verify-with-key-set";
import type { VerifiedTokens } from "../memory/verified-tokens";
import type { IdentityDeps } from "../services";
import { type ShopperTokenSettings, storableUserId, verifyShopperToken } from "./shopper-token";

export type { ShopperTokenSettings };

const BEARER = /^Bearer ([A-Za-z0-9_\-.]+)$/;

const MESSAGES = {
  missing: "Sign in: a shopper token (Authorization: Bearer <JWT>) is required.",
  invalid: "The shopper token is invalid or expired.",
  no_exp: "The shopper token has no expiry (exp).",
  no_sub: "The shopper token has no valid subject (sub).",
} as const;

/**
 * Reads the shopper from `Authorization: Bearer <JWT>`: HS256 signed with JWT_SECRET
 * (src/middleware/shopper-token.ts), or, with JWT_JWKS_URL set, RS256 / ES256 / EdDSA verified against
 * the shop's key set (the token header's `alg` decides: HS256 is only ever checked with the secret, the
 * others only with the key set; `none` and any other `alg` are refused). `exp` required and checked, `nbf`
 * checked, `sub` required (1–128 UTF-16 units of well-formed text without NUL), and `iss` / `aud` equal to
 * JWT_ISSUER / JWT_AUDIENCE when those are set (always, with a key set). Anything else is 401
 * UNAUTHENTICATED; a key set that cannot be read, with no key in hand for the token, is 503 UNAVAILABLE.
 *
 * @example
 * app.get("/api/orders/:id", shopperAuth({ deps: (c) => deps(c) }), handler)
 */
export function shopperAuth(options: { deps: (c: Parameters<MiddlewareHandler>[0]) => IdentityDeps }) {
  return async function shopperAuthMiddleware(c, next) {
    c.set("userId", await authenticateShopper(c.req.header("Authorization"), options.deps(c)));
    await next();
  } satisfies MiddlewareHandler<{ Variables: ShopperVariables }>;
}

/** Whether a token's header names HS256 (an unreadable header is not: the key set's check refuses it). */
function namesHs256(token: string): boolean {
  try {
    return decodeProtectedHeader(token).alg === "HS256";
  } catch {
    return false;
  }
}

/**
 * The user id in a shopper token, or throws 401 (503 when the shop's key set cannot be read).
 * `tokens` remembers the HS256 tokens accepted (optional; tokens checked against a key set are never
 * remembered by their text, so a key the shop drops stops working at the set's next read).
 */
export async function authenticateShopper(
  header: string | undefined,
  deps: IdentityDeps,
  tokens?: VerifiedTokens,
): Promise<string> {
  const token = BEARER.exec(header ?? "")?.[1];
  if (!token) throw new ApiError("UNAUTHENTICATED", MESSAGES.missing);
  if (deps.config.JWT_JWKS_URL && !namesHs256(token)) return viaKeySet(token, deps);
  const verdict = verifyShopperToken(token, deps.config, tokens, Math.floor(Date.now() / 1000));
  if (!verdict.ok) throw new ApiError("UNAUTHENTICATED", MESSAGES[verdict.reason]);
  return verdict.sub;
}

/** The shop's key set cannot be read and no key in hand fits: 503 with Retry-After, for shoppers and operators. */
export function keySetUnavailable(): ApiError {
  return new ApiError("UNAVAILABLE", "The shop's sign-in keys cannot be read right now. Try again shortly.", {
    retryAfterSeconds: 5,
  });
}

async function viaKeySet(token: string, deps: IdentityDeps): Promise<string> {
  const verdict = await verifyWithKeySet(token, deps);
  if (!verdict.ok && verdict.reason === "unavailable") throw keySetUnavailable();
  if (!verdict.ok) throw new ApiError("UNAUTHENTICATED", MESSAGES.invalid);
  const { exp, sub } = verdict.payload;
  if (typeof exp !== "number") throw new ApiError("UNAUTHENTICATED", MESSAGES.no_exp);
  if (typeof sub !== "string" || !storableUserId(sub)) throw new ApiError("UNAUTHENTICATED", MESSAGES.no_sub);
  return sub;
}
