import { OpenAPIHono, type RouteConfig, type RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../context";
import { validateRequest } from "./validate-request";

type Router = OpenAPIHono<AppEnv>;

/**
 * A router whose routes are described once (`createRoute`: params, headers, body, every response):
 * `router.openapi(route, handler)` adds the description to the router's registry (merged into
 * `/api/openapi.json` by the app) and mounts the handler behind the route's middleware and one
 * validator built from the same description (validate-request.ts): a request that fails it is the
 * contract's 400 INVALID_REQUEST with `fields`, before the handler runs. It keeps the signature (and the
 * handler types) of `@hono/zod-openapi`'s `openapi`, with this project's validator in place of its
 * per-target ones, which read every header, refuse bodies not sent as `application/json` and leave
 * the error shape to a hook.
 *
 * @example
 * export const saleRoutes = apiRouter().openapi(getSaleRoute, getSale);
 */
export function apiRouter(): Router {
  const router = new OpenAPIHono<AppEnv>();
  const describe: Router["openapi"] = ({ middleware, hide, ...route }, handler) => {
    if (!hide) router.openAPIRegistry.registerPath(route);
    const before = middleware === undefined ? [] : [middleware].flat();
    const path = route.path.replaceAll(/\/{(.+?)}/g, "/:$1");
    router.on([route.method], [path], ...(before as []), validateRequest(route.request), handler as never);
    return router as never;
  };
  router.openapi = describe;
  return router;
}

/**
 * What a route's handler is given: the context typed by the route's description (its valid params,
 * headers, query and body; the responses it may answer). Handlers are named functions, so a stack
 * trace names the route.
 *
 * @example
 * async function getSale(c: RouteContext<typeof getSaleRoute>) { … }
 */
export type RouteContext<R extends RouteConfig> = Parameters<RouteHandler<R, AppEnv>>[0];

/** The security requirement of a route, by the scheme names the document declares (see document.ts). */
export const SHOPPER = [{ shopperJwt: [] }];
export const OPERATOR = [{ operatorToken: [] }];
export const QSTASH = [{ qstashSignature: [] }];
export const STRIPE = [{ stripeSignature: [] }];

/** A JSON response entry of a route's `responses`. */
export function json<T>(description: string, schema: T) {
  return { description, content: { "application/json": { schema } } };
}
