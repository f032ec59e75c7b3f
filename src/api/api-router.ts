import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../context";
import { validationHook } from "./invalid-request";

/**
 * A router whose routes are described once (`createRoute`: params, headers, body, every response) and
 * validated from that description before their handler runs; a request that fails it is the contract's
 * 400 INVALID_REQUEST with `fields`. The app merges every router's descriptions into `/api/openapi.json`.
 *
 * @example
 * export const saleRoutes = apiRouter().openapi(getSaleRoute, handler);
 */
export function apiRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}

/** The security requirement of a route, by the scheme names the document declares (see document.ts). */
export const SHOPPER = [{ shopperJwt: [] }];
export const OPERATOR = [{ operatorToken: [] }];
export const QSTASH = [{ qstashSignature: [] }];

/** A JSON response entry of a route's `responses`. */
export function json<T>(description: string, schema: T) {
  return { description, content: { "application/json": { schema } } };
}
