import type { MiddlewareHandler } from "hono";
import type { ApiError } from "../http/api-error";
import { cacheBodyText } from "./json-body";

/** The body as the buy's front door read it, left on the request for the app (a symbol: nothing else sees it). */
const BODY_READ = Symbol("buy body read");
type BodyRead = { text: string } | { error: ApiError };
type WithBody = Request & { [BODY_READ]?: BodyRead };

/**
 * Leaves what the front door (src/runtime/buy-front-door.ts) made of a buy's body on the request: its
 * text, or the refusal of it, for {@link buyBodyHandoff} to hand the route.
 */
export function leaveBodyRead(req: Request, read: BodyRead): void {
  (req as WithBody)[BODY_READ] = read;
}

/**
 * In the app, in front of the buy route: hands the route the body the front door read (or its refusal
 * of it), and reads it for a request that did not pass the front door (an Idempotency-Key, a chunked
 * body, a test calling the app directly), so the route's validator finds it either way.
 *
 * @example
 * app.use("/api/buy/:productToken", buyBodyHandoff());
 */
export function buyBodyHandoff(): MiddlewareHandler {
  return async function buyBodyHandoffMiddleware(c, next) {
    const read = (c.req.raw as WithBody)[BODY_READ];
    if (read && "error" in read) throw read.error;
    if (read) cacheBodyText(c.req, read.text.trim() === "" ? "{}" : read.text);
    return next();
  };
}
