import { Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import type { AppEnv } from "./context";
import { ApiError, renderError, toApiError } from "./errors";
import { adminRoutes } from "./routes/admin";
import { adminEventRoutes } from "./routes/admin-events";
import { buyRoutes } from "./routes/buy";
import { devRoutes } from "./routes/dev";
import { orderEventRoutes, saleEventRoutes } from "./routes/events";
import { jobRoutes } from "./routes/jobs";
import { orderRoutes } from "./routes/orders";
import { saleRoutes } from "./routes/sales";

/**
 * Builds the app: security headers, one error handler (every failure becomes the contract's error
 * body; nothing internal reaches the client), and the routes by resource.
 */
export function createApp() {
  const app = new Hono<AppEnv>();
  app.use(secureHeaders());
  app.get("/api/health", (c) => c.json({ ok: true }));
  app.route("/api/sales", saleEventRoutes);
  app.route("/api/sales", saleRoutes);
  app.route("/api/buy", buyRoutes);
  app.route("/api/orders", orderEventRoutes);
  app.route("/api/orders", orderRoutes);
  app.route("/api/admin", adminEventRoutes);
  app.route("/api/admin", adminRoutes);
  app.route("/api/jobs", jobRoutes);
  app.route("/api/dev", devRoutes);
  app.notFound((c) => renderError(c, new ApiError("NOT_FOUND", "No such route.")));
  app.onError((error, c) => {
    const apiError = toApiError(error);
    if (apiError.code === "INTERNAL" || apiError.code === "UNAVAILABLE") {
      console.error(`${c.req.method} ${new URL(c.req.url).pathname}:`, error);
    }
    return renderError(c, apiError);
  });
  return app;
}
