import type { MiddlewareHandler } from "hono";
import type { ErrorCode } from "../http/api-error";
import { readBoundedBody } from "../http/read-body";

/**
 * Reads a route's JSON body for its validator (api/validate-request.ts): at most `maxBytes` (a larger one is
 * refused before it is read, see http/read-body.ts), valid UTF-8, an empty body standing for `{}`. The
 * contract says every body is JSON, so the body is read as JSON whatever its Content-Type (a bare
 * `fetch(url, { body: JSON.stringify(…) })` says `text/plain`). Goes in the route's `middleware`,
 * which runs before the validator; the text is left in Hono's body cache.
 *
 * @example
 * createRoute({ method: "post", path: "/{productToken}", middleware: [jsonBody({ maxBytes: 1024 })], … })
 */
export function jsonBody(options: {
  maxBytes: number;
  tooLargeCode?: Extract<ErrorCode, "INVALID_REQUEST" | "PAYLOAD_TOO_LARGE">;
}): MiddlewareHandler {
  return async function jsonBodyMiddleware(c, next) {
    // read already (and bounded) by a middleware in front, e.g. src/runtime/buy-front-door.ts
    if (!(c.req.bodyCache as { text?: unknown }).text) {
      const text = await readBoundedBody(c.req.raw, options.maxBytes, options.tooLargeCode);
      cacheBodyText(c.req, text.trim() === "" ? "{}" : text);
    }
    await next();
  };
}

/** Leaves a body already read in Hono's body cache, where `c.req.text()` and the validator find it. */
export function cacheBodyText(req: { bodyCache: object }, text: string): void {
  // Hono keeps the promise of each reading of the body here
  (req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
}
