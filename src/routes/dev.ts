import { Hono } from "hono";
import { sign } from "hono/jwt";
import { type AppEnv, deps } from "../context";
import { ApiError } from "../errors";
import { parseJsonObject, readBoundedBody } from "../http/read-body";

/**
 * `POST /api/dev/login {"userId"}`: mints a shopper token for any user id, for the local stack only
 * (enabled by DEV_LOGIN=true; 404 otherwise). In production the shop's own sign-in issues the JWT.
 * `GET /api/dev/login` tells a page whether it is enabled.
 */
export const devRoutes = new Hono<AppEnv>()
  .get("/login", (c) => c.json({ enabled: deps(c).config.DEV_LOGIN }))
  .post("/login", async (c) => {
    const { config, now } = deps(c);
    if (!config.DEV_LOGIN) throw new ApiError("NOT_FOUND", "No such route.");
    const userId = parseJsonObject(await readBoundedBody(c.req.raw, 1024)).userId;
    if (typeof userId !== "string" || !/^[\w.@-]{1,64}$/.test(userId)) {
      throw new ApiError("INVALID_REQUEST", "userId must be 1 to 64 letters, digits, or . _ @ -");
    }
    const iat = Math.floor(now / 1000);
    const claims = {
      sub: userId,
      iat,
      exp: iat + 12 * 3600,
      ...(config.JWT_ISSUER ? { iss: config.JWT_ISSUER } : {}),
      ...(config.JWT_AUDIENCE ? { aud: config.JWT_AUDIENCE } : {}),
    };
    const token = await sign(claims, config.JWT_SECRET, "HS256");
    return c.json({ userId, token, expiresAt: new Date((iat + 12 * 3600) * 1000).toISOString() });
  });
