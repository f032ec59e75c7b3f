import type { MiddlewareHandler } from "hono";
import { ApiError, type ErrorCode } from "../errors";
import { readBoundedBody } from "../http/read-body";

/**
 * Reads a JSON body for the route's schema: at most `maxBytes` (a larger one is refused before it is
 * read, see read-body.ts), valid UTF-8 and valid JSON, an empty body standing for `{}`. The contract
 * says every body is JSON, so a body sent without `Content-Type: application/json` (a bare
 * `fetch(url, { body: JSON.stringify(…) })` says `text/plain`) is read as JSON all the same: the request
 * is presented to the route's validator (`@hono/zod-openapi`, which would skip or refuse other media
 * types) as the JSON it is. Goes in the route's `middleware`, which runs before the validators.
 *
 * @example
 * createRoute({ method: "post", path: "/{productToken}", middleware: [jsonBody({ maxBytes: 1024 })], … })
 */
export function jsonBody(options: {
  maxBytes: number;
  tooLargeCode?: Extract<ErrorCode, "INVALID_REQUEST" | "PAYLOAD_TOO_LARGE">;
}): MiddlewareHandler {
  return async function jsonBodyMiddleware(c, next) {
    const raw = c.req.raw;
    const text = await readBoundedBody(raw, options.maxBytes, options.tooLargeCode);
    const json = text.trim() === "" ? "{}" : text;
    try {
      JSON.parse(json);
    } catch {
      throw new ApiError("INVALID_REQUEST", "The body is not valid JSON.", {
        details: { fields: { body: "The body is not valid JSON." } },
      });
    }
    const headers = new Headers(raw.headers);
    headers.set("Content-Type", "application/json");
    headers.delete("Content-Length");
    c.req.raw = new Request(raw.url, { method: raw.method, headers, signal: raw.signal });
    // Hono keeps the promise of each body reading here; the validator reads the text from it
    c.req.bodyCache = { text: Promise.resolve(json) as unknown as string };
    await next();
  };
}
