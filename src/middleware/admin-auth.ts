import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors";

const encoder = new TextEncoder();

/** Constant-time comparison of two strings (through SHA-256 digests, so lengths do not leak either). */
async function sameSecret(a: string, b: string): Promise<boolean> {
  const [da, db] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(a)),
    crypto.subtle.digest("SHA-256", encoder.encode(b)),
  ]);
  const x = new Uint8Array(da);
  const y = new Uint8Array(db);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

/**
 * Guards `/api/admin/*` with `Authorization: Bearer <ADMIN_TOKEN>`; anything else is 401.
 *
 * @example
 * app.use("/api/admin/*", adminAuth({ token: (c) => configOf(c).ADMIN_TOKEN }))
 */
export function adminAuth(options: {
  token: (c: Parameters<MiddlewareHandler>[0]) => string;
}): MiddlewareHandler {
  return async function adminAuthMiddleware(c, next) {
    const given = /^Bearer (.+)$/.exec(c.req.header("Authorization") ?? "")?.[1];
    if (!given || !(await sameSecret(given, options.token(c)))) {
      throw new ApiError("UNAUTHENTICATED", "Operator routes need Authorization: Bearer <ADMIN_TOKEN>.");
    }
    await next();
  };
}
