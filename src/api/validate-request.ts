import type { RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { z } from "zod";
import { ApiError } from "../http/api-error";
import { invalidRequest } from "./invalid-request";

type Schema = z.ZodType;

/** The zod schema of a route's JSON request body, if it declares one. */
function jsonBodySchema(request: RouteConfig["request"]): Schema | undefined {
  const media = request?.body?.content?.["application/json"] as { schema?: unknown } | undefined;
  const schema = media?.schema;
  return schema && typeof (schema as Schema).safeParse === "function" ? (schema as Schema) : undefined;
}

function parsed(schema: Schema, value: unknown, target: string): object {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidRequest(result.error, target);
  return result.data as object;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError("INVALID_REQUEST", "The body is not valid JSON.", {
      details: { fields: { body: "The body is not valid JSON." } },
    });
  }
}

/**
 * Validates a request against its route's description before the handler runs: query, path params,
 * the headers the route names, and the JSON body (read before, with its bound, by `jsonBody` or the
 * QStash signature check, which leave the text in Hono's body cache). A failure is the contract's 400
 * INVALID_REQUEST with `fields`; what passes is what `c.req.valid(...)` returns. Only the named headers
 * are read (not the whole header list) and no request is rebuilt: this runs on every buy attempt.
 *
 * @example
 * router.on(["post"], ["/:productToken"], jsonBody({ maxBytes: 1024 }), validateRequest(route.request), handler)
 */
export function validateRequest(request: RouteConfig["request"]): MiddlewareHandler {
  const query = request?.query as Schema | undefined;
  const params = request?.params as Schema | undefined;
  const headers = request?.headers as (Schema & { shape: Record<string, unknown> }) | undefined;
  const headerNames = headers ? Object.keys(headers.shape) : [];
  const body = jsonBodySchema(request);
  return async function validateRequestMiddleware(c, next) {
    if (query) c.req.addValidatedData("query", parsed(query, c.req.query(), "query"));
    if (params) c.req.addValidatedData("param", parsed(params, c.req.param(), "param"));
    if (headers) {
      const values: Record<string, string> = {};
      for (const name of headerNames) {
        const value = c.req.header(name);
        if (value !== undefined) values[name] = value;
      }
      c.req.addValidatedData("header", parsed(headers, values, "header"));
    }
    if (body) {
      const text = c.req.bodyCache.text as unknown as Promise<string> | undefined;
      if (!text)
        throw new Error(`${c.req.method} ${c.req.routePath}: a JSON body must be read by jsonBody first`);
      c.req.addValidatedData("json", parsed(body, parseJson(await text), "json"));
    }
    await next();
  };
}
