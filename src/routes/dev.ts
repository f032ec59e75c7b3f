import { createRoute } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { sign } from "hono/jwt";
import { apiRouter, json, type RouteContext } from "../api/api-router";
import {
  devLoginBodySchema,
  devLoginSchema,
  devLoginStatusSchema,
  MAX_DEV_BODY_BYTES,
} from "../api/dev-schemas";
import { errorResponses } from "../api/error-responses";
import { configOf, deps } from "../context";
import { ApiError } from "../http/api-error";
import { jsonBody } from "../middleware/json-body";

const TOKEN_LIFETIME_SECONDS = 12 * 3600;

/** Answers 404 (as if the route did not exist) unless DEV_LOGIN=true, before the body is read. */
const devLoginEnabled: MiddlewareHandler = async function devLoginEnabled(c, next) {
  if (!configOf(c).DEV_LOGIN) throw new ApiError("NOT_FOUND", "No such route.");
  await next();
};

const loginStatus = createRoute({
  method: "get",
  path: "/login",
  tags: ["Local"],
  summary: "Whether the dev login is on",
  description: "Tells a page whether `POST /api/dev/login` mints tokens on this deployment.",
  responses: { 200: json("Whether the dev login is on.", devLoginStatusSchema) },
});

const login = createRoute({
  method: "post",
  path: "/login",
  tags: ["Local"],
  summary: "Mint a shopper token (local stack only)",
  description:
    "Signs a shopper token for any user id, for the local stack (DEV_LOGIN=true; 404 NOT_FOUND otherwise). In production the shop's own sign-in issues the JWT.",
  middleware: [devLoginEnabled, jsonBody({ maxBytes: MAX_DEV_BODY_BYTES })] as const,
  request: { body: { required: true, content: { "application/json": { schema: devLoginBodySchema } } } },
  responses: {
    200: json("A shopper token valid for 12 hours.", devLoginSchema),
    ...errorResponses("INVALID_REQUEST", "NOT_FOUND"),
  },
});

/** `GET /api/dev/login`: whether the dev login is on. */
function devLoginStatus(c: RouteContext<typeof loginStatus>) {
  return c.json({ enabled: deps(c).config.DEV_LOGIN }, 200);
}

/** `POST /api/dev/login`: mint a shopper token (local stack only). */
async function devLogin(c: RouteContext<typeof login>) {
  const { config, now } = deps(c);
  const { userId } = c.req.valid("json");
  const iat = Math.floor(now / 1000);
  const exp = iat + TOKEN_LIFETIME_SECONDS;
  const claims = {
    sub: userId,
    iat,
    exp,
    ...(config.JWT_ISSUER ? { iss: config.JWT_ISSUER } : {}),
    ...(config.JWT_AUDIENCE ? { aud: config.JWT_AUDIENCE } : {}),
  };
  const token = await sign(claims, config.JWT_SECRET, "HS256");
  return c.json({ userId, token, expiresAt: new Date(exp * 1000).toISOString() }, 200);
}

/**
 * `POST /api/dev/login {"userId"}`: mints a shopper token for any user id, for the local stack only
 * (enabled by DEV_LOGIN=true; 404 otherwise). `GET /api/dev/login` tells a page whether it is enabled.
 */
export const devRoutes = apiRouter().openapi(loginStatus, devLoginStatus).openapi(login, devLogin);
