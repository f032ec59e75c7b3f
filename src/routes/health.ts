import { createRoute, z } from "@hono/zod-openapi";
import { apiRouter, json, type RouteContext } from "../api/api-router";

const health = createRoute({
  method: "get",
  path: "/",
  tags: ["Local"],
  summary: "Liveness",
  description: "Answers while the engine runs; touches no store.",
  responses: { 200: json("The engine runs.", z.strictObject({ ok: z.literal(true) })) },
});

/** `GET /api/health`: the engine is up (no store is asked). */
function healthCheck(c: RouteContext<typeof health>) {
  return c.json({ ok: true as const }, 200);
}

export const healthRoutes = apiRouter().openapi(health, healthCheck);
