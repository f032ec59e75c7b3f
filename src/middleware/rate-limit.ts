import type { MiddlewareHandler } from "hono";
import { clientIp } from "../buy/attempt";
import { type AppEnv, deps } from "../context";
import { ApiError } from "../http/api-error";
import { checkRouteLimits, type LimitedRoute } from "../limits/route-limits";

/**
 * The request limits of a shopper route (src/limits/route-limits.ts), as route middleware: per user on
 * signed-in routes (after the shopper's token, so it names the user) and per client address on all;
 * past either, 429 RATE_LIMITED with Retry-After, before the route reads its body or a store.
 *
 * @example
 * middleware: [signedIn, limited("order-read")] as const,
 */
export function limited(route: LimitedRoute): MiddlewareHandler<AppEnv> {
  return async function routeLimitMiddleware(c, next) {
    const outcome = await checkRouteLimits(deps(c), route, {
      userId: c.get("userId"),
      ip: clientIp(c.get("clientIp")),
    });
    if (outcome.kind === "limited") throw rateLimited(outcome.retryAfterMs);
    await next();
  };
}

/** 429 RATE_LIMITED, the wait in `Retry-After` and in the body (the buy route answers the same). */
export function rateLimited(retryAfterMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new ApiError("RATE_LIMITED", "Too many requests; wait before trying again.", {
    retryAfterSeconds: seconds,
    details: { retryAfterSeconds: seconds },
  });
}
