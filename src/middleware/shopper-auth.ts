import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors";
import type { VerifiedTokens } from "../memory/verified-tokens";
import { type ShopperTokenSettings, verifyShopperToken } from "./shopper-token";

export type { ShopperTokenSettings };

export type ShopperVariables = { userId: string };

const BEARER = /^Bearer ([A-Za-z0-9_\-.]+)$/;

const MESSAGES = {
  missing: "Sign in: a shopper token (Authorization: Bearer <JWT>) is required.",
  invalid: "The shopper token is invalid or expired.",
  no_exp: "The shopper token has no expiry (exp).",
  no_sub: "The shopper token has no valid subject (sub).",
} as const;

/**
 * Reads the shopper from `Authorization: Bearer <JWT>` (src/middleware/shopper-token.ts: HS256 only,
 * `exp` required and checked, `nbf` checked, `sub` required, `iss` / `aud` when set). Anything else is
 * 401 UNAUTHENTICATED.
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

/** The user id in a shopper token, or throws 401; `tokens` remembers the tokens accepted (optional). */
export async function authenticateShopper(
  header: string | undefined,
  settings: ShopperTokenSettings,
  tokens?: VerifiedTokens,
): Promise<string> {
  const token = BEARER.exec(header ?? "")?.[1];
  if (!token) throw new ApiError("UNAUTHENTICATED", MESSAGES.missing);
  const verdict = verifyShopperToken(token, settings, tokens, Math.floor(Date.now() / 1000));
  if (!verdict.ok) throw new ApiError("UNAUTHENTICATED", MESSAGES[verdict.reason]);
  return verdict.sub;
}
