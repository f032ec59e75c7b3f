import type { MiddlewareHandler } from "hono";
import { ApiError } from "../http/api-error";

/**
 * The most request-header bytes the API takes: 32 KiB, counted as names, values, ": " and CRLF. Below
 * every runtime's own limit (Deno's fixed ~64 KiB, workerd's 128 KiB, and Bun's once started with
 * `--max-http-header-size=131072`; its default is 16 KiB), so the app, not the HTTP server, answers.
 */
export const MAX_HEADER_BYTES = 32 * 1024;

/**
 * Refuses a request whose headers together exceed `maxBytes` with 431 HEADERS_TOO_LARGE and the
 * contract's error body, before anything reads them (credentials included): the same status and body
 * on Workers, Deno and Bun, where each HTTP server would otherwise refuse in its own way (Bun an empty
 * 431, Deno an empty 400) or not at all (workerd up to 128 KiB).
 *
 * @example
 * app.use("/api/*", headerLimit({ maxBytes: MAX_HEADER_BYTES }));
 */
export function headerLimit(options: { maxBytes: number }) {
  const message = `The request's headers are larger than ${Math.round(options.maxBytes / 1024)} KiB.`;
  return async function headerLimitMiddleware(c, next) {
    let size = 0;
    for (const [name, value] of c.req.raw.headers) size += name.length + value.length + 4;
    if (size > options.maxBytes) throw new ApiError("HEADERS_TOO_LARGE", message);
    await next();
  } satisfies MiddlewareHandler;
}
