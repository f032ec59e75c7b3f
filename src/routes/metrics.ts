import type { Context } from "hono";
import { ApiError } from "../http/api-error";

/** The process's metrics as Prometheus text, from a server runtime's registry (src/runtime/prom-metrics.ts). */
export type MetricsExposition = {
  /** the exposition format's media type (`text/plain; version=0.0.4; charset=utf-8`) */
  contentType: string;
  render(): Promise<string>;
};

/**
 * `GET /metrics`'s handler: the exposition, behind the operator token (the app puts the check in front
 * of it). A runtime without one (Workers: Workers Logs and Analytics Engine watch there) answers
 * 404 NOT_FOUND, as for any unknown route.
 *
 * @example
 * app.get("/metrics", metricsHandler(platform.metrics));
 */
export function metricsHandler(exposition: MetricsExposition | undefined) {
  return async function serveMetrics(c: Context) {
    if (!exposition) throw new ApiError("NOT_FOUND", "No such route.");
    return c.body(await exposition.render(), 200, { "Content-Type": exposition.contentType });
  };
}
