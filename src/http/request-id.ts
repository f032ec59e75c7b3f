/** The header that carries a request's id, both ways: the caller's (if well formed) and the answer's. */
export const REQUEST_ID_HEADER = "X-Request-Id";

/**
 * What a caller's request id may be to be kept: 1 to 128 characters that need no escaping in JSON, a
 * header or a log line (a UUID, a `cf-ray`, a trace id, `Root=1-…` of a load balancer).
 */
const WELL_FORMED = /^[A-Za-z0-9._:+/=-]{1,128}$/;

/**
 * The id of a request: the caller's `X-Request-Id` if it is well formed, else a new random UUID. Every
 * response carries it back, and every error body (`error.requestId`) and log line names it, so a
 * shopper's report and the engine's logs meet.
 *
 * @example
 * requestIdOf(req.headers.get(REQUEST_ID_HEADER)); // "3f0c…" (new) or the caller's own
 */
export function requestIdOf(sent: string | null | undefined): string {
  return sent && WELL_FORMED.test(sent) ? sent : crypto.randomUUID();
}
