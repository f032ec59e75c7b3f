/** What one request's log line says: never a header, a query string, a body or a path's own values. */
export type RequestLogFields = {
  requestId: string;
  method: string;
  /** the route's pattern (`/api/buy/:productToken`), not the path: a path may carry a token */
  route: string;
  status: number;
  /** the error code of an error answer (`SOLD_OUT`, `RATE_LIMITED`, …) */
  code?: string | undefined;
  durationMs: number;
};

/**
 * Whether a request's line is written: every answer of 500 or more, and a sampled share of the rest
 * (LOG_SAMPLE_RATE: 0 writes only the failures, 1 every request).
 */
export function shouldLog(status: number, sampleRate: number): boolean {
  return status >= 500 || (sampleRate > 0 && Math.random() < sampleRate);
}

/**
 * One structured JSON line for a request, at most one per request: what a log pipeline indexes (the
 * request id a shopper quotes, the route, the status, the outcome code, the time it took).
 *
 * @example
 * console.log(requestLogLine({ requestId, method: "POST", route: "/api/buy/:productToken", status: 410, code: "SOLD_OUT", durationMs: 0.4 }));
 * // {"level":"info","msg":"request","requestId":"…","method":"POST","route":"/api/buy/:productToken","status":410,"code":"SOLD_OUT","durationMs":0.4}
 */
export function requestLogLine(fields: RequestLogFields): string {
  return JSON.stringify({
    level: fields.status >= 500 ? "error" : "info",
    msg: "request",
    ...fields,
    durationMs: Math.round(fields.durationMs * 100) / 100,
  });
}
