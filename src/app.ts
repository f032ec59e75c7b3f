import type { Context, MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";
import { apiRouter } from "./api/api-router";
import { openApiDocument } from "./api/document";
import { configOf } from "./context";
import { ApiError, renderError, toApiError } from "./errors";
import { adminAuth } from "./middleware/admin-auth";
import { headerLimit, MAX_HEADER_BYTES } from "./middleware/header-limit";
import { adminRoutes } from "./routes/admin";
import { adminEventRoutes } from "./routes/admin-events";
import { adminPaymentRoutes } from "./routes/admin-payments";
import { adminQueueRoutes } from "./routes/admin-queue";
import { adminReportRoutes } from "./routes/admin-reports";
import { adminStockRoutes } from "./routes/admin-stock";
import { adminWebhookRoutes } from "./routes/admin-webhooks";
import { buyRoutes } from "./routes/buy";
import { buyBodyHandoff } from "./routes/buy-refusals";
import { checkoutRoutes } from "./routes/checkout";
import { devRoutes } from "./routes/dev";
import { orderEventRoutes, saleEventRoutes } from "./routes/events";
import { healthRoutes } from "./routes/health";
import { jobRoutes } from "./routes/jobs";
import { orderRoutes } from "./routes/orders";
import { paymentRoutes } from "./routes/payments";
import { queueRoutes } from "./routes/queue";
import { queueEventRoutes } from "./routes/queue-events";
import { saleListEventRoutes } from "./routes/sale-list-events";
import { saleRoutes } from "./routes/sales";
import { webhookJobRoutes } from "./routes/webhook-jobs";
import { type Defer, depsAt, type Services } from "./services";

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
  if (platform.assets) {
    const assets = platform.assets;
    app.use("*", (c, next) => (c.req.path.startsWith("/api/") ? next() : assets(c, next)));
  }
  app.use(secureHeaders());
  app.use("/api/*", headerLimit({ maxBytes: MAX_HEADER_BYTES }));
  // needs no services: answered before they are built
  app.get("/api/openapi.json", (c) => c.json(openApiDocument(app)));
  // the body a buy's front door read (src/routes/buy-refusals.ts, in front of the app), for the route
  app.use("/api/buy/:productToken", buyBodyHandoff());
  app.use("/api/*", async function requestDeps(c, next) {
    const defer = platform.defer(c);
    c.set(
      "deps",
      depsAt(platform.services(c), (task) => defer(task)),
    );
    c.set("clientIp", platform.clientIp(c));
    await next();
  });
  // every operator route, known or not: the token is checked before any body or input is read
  app.use("/api/admin/*", adminAuth({ token: (c) => configOf(c).ADMIN_TOKEN }));
  app.route("/api/health", healthRoutes);
  app.route("/api/sales", saleListEventRoutes);
  app.route("/api/sales", saleEventRoutes);
  app.route("/api/sales", queueEventRoutes);
  app.route("/api/sales", queueRoutes);
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
  app.route("/api/admin", adminQueueRoutes);
  app.route("/api/jobs", jobRoutes);
  app.route("/api/jobs", webhookJobRoutes);
  app.route("/api/dev", devRoutes);
  app.notFound((c) => renderError(c, new ApiError("NOT_FOUND", "No such route.")));
  app.onError((error, c) => {
    const apiError = toApiError(error);
    // a refusal the code chose (a stream budget spent, a sale being restored) is an answer, not a fault
    if (apiError.code === "INTERNAL" || (apiError.code === "UNAVAILABLE" && !(error instanceof ApiError))) {
      console.error(`${c.req.method} ${new URL(c.req.url).pathname}:`, error);
    }
    return renderError(c, apiError);
  });
  return app;
}
