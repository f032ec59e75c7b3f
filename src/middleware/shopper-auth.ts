import type { MiddlewareHandler } from "hono";
import { verify } from "hono/jwt";
import { decodeProtectedHeader } from "jose";
import { hmacKey } from "../crypto/hmac-key";
import type { Config } from "../env";
import { ApiError } from "../errors";
import { verifyWithKeySet } from "../identity/verify-with-key-set";
import type { IdentityDeps } from "../services";

export type ShopperVariables = { userId: string };

/** What a shopper token is checked against: the secret, and the issuer and audience when set. */
export type ShopperTokenSettings = Pick<Config, "JWT_SECRET" | "JWT_ISSUER" | "JWT_AUDIENCE">;

const MAX_USER_ID_LENGTH = 128;
/**
 * Characters no user id may hold: NUL (Postgres text cannot store it: the order write of every order
 * in its batch failed) and unpaired UTF-16 surrogates (stored as U+FFFD by Redis and Postgres alike, so
 * "a\uD83D" and "a\uFFFD" were one user there: one key's answers, holdings, and each other's orders).
 */
const unstorable = (id: string) => id.includes("\u0000") || /\p{Cs}/u.test(id);

/**
 * Reads the shopper from `Authorization: Bearer <JWT>`: HS256 signed with JWT_SECRET, or, with
 * JWT_JWKS_URL set, RS256 / ES256 / EdDSA verified against the shop's key set (the token header's `alg`
 * decides: HS256 is only ever checked with the secret, the others only with the key set; `none` and any
 * other `alg` are refused). `exp` required and checked, `nbf` checked, `sub` required (1–128 UTF-16 units
 * of well-formed text without NUL), and `iss` / `aud` equal to JWT_ISSUER / JWT_AUDIENCE when those are
 * set (always, with a key set). Anything else is 401 UNAUTHENTICATED; a key set that cannot be read, with
 * no key in hand for the token, is 503 UNAVAILABLE.
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

/** The user id in a shopper token, or throws 401 (503 when the shop's key set cannot be read). */
export async function authenticateShopper(header: string | undefined, deps: IdentityDeps): Promise<string> {
  const token = /^Bearer ([A-Za-z0-9_\-.]+)$/.exec(header ?? "")?.[1];
  if (!token)
    throw new ApiError(
      "UNAUTHENTICATED",
      "Sign in: a shopper token (Authorization: Bearer <JWT>) is required.",
    );
  const payload =
    deps.config.JWT_JWKS_URL && !namesHs256(token)
      ? await viaKeySet(token, deps)
      : await viaSecret(token, deps.config);
  if (typeof payload.exp !== "number") {
    throw new ApiError("UNAUTHENTICATED", "The shopper token has no expiry (exp).");
  }
  const sub = payload.sub;
  if (typeof sub !== "string" || sub.length === 0 || sub.length > MAX_USER_ID_LENGTH || unstorable(sub)) {
    throw new ApiError("UNAUTHENTICATED", "The shopper token has no valid subject (sub).");
  }
  return sub;
}

async function viaKeySet(token: string, deps: IdentityDeps): Promise<Record<string, unknown>> {
  const verdict = await verifyWithKeySet(token, deps);
  if (verdict.ok) return verdict.payload;
  if (verdict.reason === "unavailable")
    throw new ApiError(
      "UNAVAILABLE",
      "The shop's sign-in keys cannot be read right now. Try again shortly.",
      {
        retryAfterSeconds: 5,
      },
    );
  throw new ApiError("UNAUTHENTICATED", "The shopper token is invalid or expired.");
}

async function viaSecret(token: string, settings: ShopperTokenSettings): Promise<Record<string, unknown>> {
  let payload: Record<string, unknown>;
  try {
    payload = await verify(token, await hmacKey(settings.JWT_SECRET, "verify"), {
      alg: "HS256",
      ...(settings.JWT_ISSUER ? { iss: settings.JWT_ISSUER } : {}),
      ...(settings.JWT_AUDIENCE ? { aud: settings.JWT_AUDIENCE } : {}),
    });
  } catch {
    throw new ApiError("UNAUTHENTICATED", "The shopper token is invalid or expired.");
  }
  return payload;
}
