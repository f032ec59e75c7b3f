import type { MiddlewareHandler } from "hono";
import { verify } from "hono/jwt";
import { hmacKey } from "../crypto/hmac-key";
import type { Config } from "../env";
import { ApiError } from "../errors";

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
 * Reads the shopper from `Authorization: Bearer <JWT>`: HS256 only (an `alg: none` or RS256 header is
 * refused), `exp` required and checked, `nbf` checked, `sub` required (1–128 UTF-16 units of
 * well-formed text without NUL), and `iss` / `aud` equal to
 * JWT_ISSUER / JWT_AUDIENCE when those are set. Anything else is 401 UNAUTHENTICATED.
 *
 * @example
 * app.get("/api/orders/:id", shopperAuth({ settings: (c) => configOf(c) }), handler)
 */
export function shopperAuth(options: {
  settings: (c: Parameters<MiddlewareHandler>[0]) => ShopperTokenSettings;
}) {
  return async function shopperAuthMiddleware(c, next) {
    c.set("userId", await authenticateShopper(c.req.header("Authorization"), options.settings(c)));
    await next();
  } satisfies MiddlewareHandler<{ Variables: ShopperVariables }>;
}

/** The user id in a shopper token, or throws 401. */
export async function authenticateShopper(
  header: string | undefined,
  settings: ShopperTokenSettings,
): Promise<string> {
  const token = /^Bearer ([A-Za-z0-9_\-.]+)$/.exec(header ?? "")?.[1];
  if (!token)
    throw new ApiError(
      "UNAUTHENTICATED",
      "Sign in: a shopper token (Authorization: Bearer <JWT>) is required.",
    );
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
  if (typeof payload.exp !== "number") {
    throw new ApiError("UNAUTHENTICATED", "The shopper token has no expiry (exp).");
  }
  const sub = payload.sub;
  if (typeof sub !== "string" || sub.length === 0 || sub.length > MAX_USER_ID_LENGTH || unstorable(sub)) {
    throw new ApiError("UNAUTHENTICATED", "The shopper token has no valid subject (sub).");
  }
  return sub;
}
