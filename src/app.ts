import type { Context, MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";
import { apiRouter } from "./api/api-router";
import { openApiDocument } from "./api/document";
import { CatalogMissingError } from "./catalog/catalog";
import { type AppContext, type AppEnv, configOf, deps } from "./context";
import { SaleLostError, StoreUnavailableError } from "./errors";
import { ApiError, renderError, toApiError } from "./http/api-error";
import { REQUEST_ID_HEADER, requestIdOf } from "./http/request-id";
import { requestLogLine, shouldLog } from "./http/request-log";
import { JOBS_MOUNT } from "./job-paths";
import { clientKey } from "./limits/client-key";
import { adminAuth, operatorsOf } from "./middleware/admin-auth";
import { buyBodyHandoff } from "./middleware/buy-body-handoff";
import { headerLimit, MAX_HEADER_BYTES } from "./middleware/header-limit";
import { recoverLostSales } from "./recovery/recover-sales";
import { adminRoutes } from "./routes/admin";
import { adminAuditRoutes } from "./routes/admin-audit";
import { adminEventRoutes } from "./routes/admin-events";
import { adminPaymentRoutes } from "./routes/admin-payments";
import { adminReportRoutes } from "./routes/admin-reports";
import { adminRoomRoutes } from "./routes/admin-room";
import { adminStockRoutes } from "./routes/admin-stock";
import { adminWebhookRoutes } from "./routes/admin-webhooks";
import { buyRoutes } from "./routes/buy";
import { checkoutRoutes } from "./routes/checkout";
import { devRoutes } from "./routes/dev";
import { orderEventRoutes, saleEventRoutes } from "./routes/events";
import { healthRoutes } from "./routes/health";
import { jobRoutes } from "./routes/jobs";
import { type MetricsExposition, metricsHandler } from "./routes/metrics";
import { orderRoutes } from "./routes/orders";
import { paymentRoutes } from "./routes/payments";
import { roomRoutes } from "./routes/room";
import { roomEventRoutes } from "./routes/room-events";
import { saleListEventRoutes } from "./routes/sale-list-events";
import { saleRoutes } from "./routes/sales";
import { webhookJobRoutes } from "./routes/webhook-jobs";
import { type Defer, depsAt, type Services } from "./services";
import { annotate, tracingOn } from "./tracing";

const BUY_ROUTE = "/api/buy/:productToken";

/** A request's counts (the process's metrics): its route, status and duration; a buy's outcome by code. */
function countRequest(c: Context<AppEnv>, started: number): void {
  const deps = c.get("deps");
  if (!deps) return;
  const { metrics } = deps;
  if (!metrics) return;
  const route = c.req.routePath;
  const status = c.res.status;
  metrics.request(route, c.req.method, status, (performance.now() - started) / 1000);
  if (route === BUY_ROUTE && c.req.method === "POST")
    metrics.buyOutcome(status === 202 ? "ADMITTED" : (c.get("errorCode") ?? `HTTP_${status}`));
}

/** One structured line for an `/api` request: every failure (500 and up), a sample (LOG_SAMPLE_RATE) of the rest. */
function logRequest(c: Context<AppEnv>, requestId: string, started: number): void {
  const deps = c.get("deps");
  if (!deps) return; // not an API request (a page), or refused before the request's deps were made
  const status = c.res.status;
  if (!shouldLog(status, deps.config.LOG_SAMPLE_RATE)) return;
  const line = requestLogLine({
    requestId,
    method: c.req.method,
    route: c.req.routePath,
    status,
    code: c.get("errorCode"),
    durationMs: performance.now() - started,
  });
  if (status >= 500) console.error(line);
  else console.log(line);
}

/**
 * The request's span (the runtime's, or Bun's from `httpSpans`) named by its route, with the request id,
 * the outcome code of a refusal, and `url.full` and `url.path` without what a URL may hold in secret (the
 * buy's product token, any query).
 */
function annotateRequestSpan(c: Context<AppEnv>, requestId: string): void {
  const route = c.req.routePath;
  // whatever answered (the route, or a middleware before it), a buy's path never shows its token
  const path = c.req.path.replace(/^\/api\/buy\/[^/]*/, "/api/buy/:productToken");
  const code = c.get("errorCode");
  annotate(
    {
      "http.route": route,
      "url.full": `${new URL(c.req.url).origin}${path}`,
      "url.path": path,
      "flash_sale.request_id": requestId,
      ...(code ? { "flash_sale.code": code } : {}),
    },
    `${c.req.method} ${route}`,
  );
}

/** What a runtime entry (src/runtime/) gives the app: its services and its platform's ways. */
export type Platform = {
  /** The services (built once per isolate or process; on Workers from the first request's bindings). */
  services(c: Context): Services;
  /** Where this request's background work goes: `waitUntil` on Workers, the task set on servers. */
  defer(c: Context): Defer;
  /** The client's address as the platform gives it (a header it sets, or the socket's). */
  clientIp(c: Context): string | undefined;
  /** Serves `public/` on runtimes without a static assets layer (everything outside `/api/`). */
  assets?: MiddlewareHandler;
  /** The process's metrics for `GET /metrics` (server runtimes); without it, `/metrics` is 404. */
  metrics?: MetricsExposition;
  /** Each request's HTTP server span, where the runtime makes none itself (Bun with tracing on). */
  httpSpans?: MiddlewareHandler;
};

/**
 * Builds the app from a runtime's platform: security headers, one error handler (every failure becomes
 * the contract's error body; nothing internal reaches the client), and the routes by resource.
 *
 * @example
 * const app = createApp({ services: () => services, defer: () => tasks.defer, clientIp: () => undefined });
 */
export function createApp(platform: Platform) {
  const app = apiRouter();
  if (platform.httpSpans) app.use("*", platform.httpSpans);
  // first of all: every answer, an error or a page, carries the request's id
  app.use("*", async function requestId(c, next) {
    const started = performance.now();
    const id = requestIdOf(c.req.header(REQUEST_ID_HEADER));
    c.set("requestId", id);
    await next();
    countRequest(c, started);
    logRequest(c, id, started);
    if (tracingOn()) annotateRequestSpan(c, id);
    try {
      c.res.headers.set(REQUEST_ID_HEADER, id);
    } catch {
      // a response whose headers are immutable (one a fetch returned): copied once to carry the id
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set(REQUEST_ID_HEADER, id);
    }
  });
  if (platform.assets) {
    const assets = platform.assets;
    app.use("*", function staticAssets(c, next) {
      return c.req.path.startsWith("/api/") || c.req.path === "/metrics" ? next() : assets(c, next);
    });
  }
  app.use(secureHeaders());
  app.use("/api/*", headerLimit({ maxBytes: MAX_HEADER_BYTES }));
  // needs no services: answered before they are built
  app.get("/api/openapi.json", function serveOpenApiDocument(c) {
    return c.json(openApiDocument(app));
  });
  // the body a buy's front door read (src/runtime/buy-front-door.ts, in front of the app), for the route
  app.use("/api/buy/:productToken", buyBodyHandoff());
  const requestDeps: MiddlewareHandler<AppEnv> = async function requestDeps(c, next) {
    const defer = platform.defer(c);
    const d = depsAt(platform.services(c), (task) => defer(task));
    c.set("deps", d);
    c.set("clientIp", clientKey(platform.clientIp(c), d.config.IPV6_PREFIX_BITS));
    await next();
  };
  app.use("/api/*", requestDeps);
  // every operator route, known or not: the token is checked before any body or input is read
  const operatorAuth = adminAuth({
    operators: (c) => operatorsOf(configOf(c)),
    identity: (c) => deps(c as AppContext),
  });
  app.use("/api/admin/*", operatorAuth);
  // the metrics are the operators' too, readers included (a runtime without them answers 404 before any check)
  if (platform.metrics) app.use("/metrics", requestDeps, operatorAuth);
  app.get("/metrics", metricsHandler(platform.metrics));
  app.route("/api/health", healthRoutes);
  app.route("/api/sales", saleListEventRoutes);
  app.route("/api/sales", saleEventRoutes);
  app.route("/api/sales", roomEventRoutes);
  app.route("/api/sales", roomRoutes);
  app.route("/api/sales", saleRoutes);
  app.route("/api/buy", buyRoutes);
  app.route("/api/orders", orderEventRoutes);
  app.route("/api/orders", orderRoutes);
  app.route("/api/orders", checkoutRoutes);
  app.route("/api/payments", paymentRoutes);
  app.route("/api/admin", adminEventRoutes);
  app.route("/api/admin", adminRoutes);
  app.route("/api/admin", adminStockRoutes);
  app.route("/api/admin", adminReportRoutes);
  app.route("/api/admin", adminWebhookRoutes);
  app.route("/api/admin", adminPaymentRoutes);
  app.route("/api/admin", adminRoomRoutes);
  app.route("/api/admin", adminAuditRoutes);
  app.route(JOBS_MOUNT, jobRoutes);
  app.route(JOBS_MOUNT, webhookJobRoutes);
  app.route("/api/dev", devRoutes);
  app.notFound((c) => renderError(c, new ApiError("NOT_FOUND", "No such route.")));
  app.onError((error, c) => {
    const apiError = toApiError(error);
    const d = c.get("deps");
    if (error instanceof StoreUnavailableError) d?.metrics?.storeError(error.store);
    // a sale the catalog lists and Redis lost, or the catalog itself: rebuilt by the recovery (once per
    // process every few seconds)
    if ((error instanceof SaleLostError || error instanceof CatalogMissingError) && d) {
      // a catalog lost: registered again, nothing rebuilt (a sale without keys may be being created)
      d.defer(recoverLostSales(d, { catalogOnly: error instanceof CatalogMissingError }));
      return renderError(c, apiError);
    }
    // a refusal the code chose (a stream budget spent, a sale being restored) is an answer, not a fault
    if (apiError.code === "INTERNAL" || (apiError.code === "UNAVAILABLE" && !(error instanceof ApiError))) {
      // the route's pattern, not the path: a buy's path carries its product token
      console.error(`${c.req.method} ${c.req.routePath} [${c.get("requestId")}]:`, error);
    }
    return renderError(c, apiError);
  });
  return app;
}
