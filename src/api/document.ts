import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../context";
import { registerWebhookEvents } from "./webhook-events";

type Document = ReturnType<OpenAPIHono<AppEnv>["getOpenAPI31Document"]>;

const DESCRIPTION = `A flash-sale engine: shoppers reserve units of a live sale with one atomic step on Redis, the
order is written to Postgres asynchronously (QStash), and an unpaid order expires and gives its units back
exactly once. Every error is \`{"error": {"code", "message"}}\` with the status listed per route; times are
ISO-8601 strings in UTC, money is integer cents. The same contract holds on Cloudflare Workers, Deno and Bun.

Request bodies are read as JSON whatever their Content-Type. A request that fails its route's schema is
400 \`INVALID_REQUEST\` with \`fields\` naming each bad input, and changes nothing. A path that is no
route is 404 \`NOT_FOUND\`, except under \`/api/admin/\`: there anything without the operator token,
a path that is no route included, is 401 \`UNAUTHENTICATED\`.`;

/** Declares the three credentials the routes name (see api-router.ts). */
function registerSecuritySchemes(app: OpenAPIHono<AppEnv>): void {
  const schemes = app.openAPIRegistry;
  schemes.registerComponent("securitySchemes", "shopperJwt", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "A shopper token from the shop's sign-in: HS256 with JWT_SECRET, or (with JWT_JWKS_URL set) RS256 / ES256 / EdDSA verified against the shop's key set; `sub` the user id, `exp` required; `iss` / `aud` checked when JWT_ISSUER / JWT_AUDIENCE are set (always, with a key set). A key set that cannot be read is 503 `UNAVAILABLE`, not 401.",
  });
  schemes.registerComponent("securitySchemes", "operatorToken", {
    type: "http",
    scheme: "bearer",
    description:
      "An operator's token: ADMIN_TOKEN or one of OPERATOR_TOKENS (a `read` operator may only GET).",
  });
  schemes.registerComponent("securitySchemes", "stripeSignature", {
    type: "apiKey",
    in: "header",
    name: "Stripe-Signature",
    description:
      "Stripe's `t=…,v1=…` HMAC-SHA256 of the timestamp and the raw body with STRIPE_WEBHOOK_SECRET. Only Stripe calls this route.",
  });
  schemes.registerComponent("securitySchemes", "qstashSignature", {
    type: "apiKey",
    in: "header",
    name: "Upstash-Signature",
    description:
      "QStash's signed JWT over the delivery's URL and body, checked with the current and next signing keys. Only QStash calls these routes.",
  });
}

let cached: Document | null = null;

/**
 * The OpenAPI 3.1 document of `app`, generated from its routes' schemas the first time it is asked for
 * and kept for the isolate's life (it cannot change while the code does not).
 */
export function openApiDocument(app: OpenAPIHono<AppEnv>): Document {
  if (cached) return cached;
  registerSecuritySchemes(app);
  registerWebhookEvents(app.openAPIRegistry);
  cached = app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: { title: "Flash-sale engine", version: "1.0.0", description: DESCRIPTION },
    tags: [
      { name: "Shopper", description: "Sales, buying and orders, as a shop's pages and apps call them." },
      {
        name: "Admission",
        description: "Queue and draw sales: the waiting room, its tickets and verdicts, the draw to verify.",
      },
      { name: "Realtime", description: "Server-Sent Events streams (`text/event-stream`)." },
      { name: "Operator", description: "Creating and running sales; needs the operator token." },
      {
        name: "Payments",
        description:
          "Who decides `paid` (PAYMENT_PROVIDER): Stripe's hosted checkout and its signed webhook, the shop's back end (`manual`), or the shopper's own pay button (`local`, local development only).",
      },
      { name: "Jobs", description: "QStash deliveries: order writes, payment timeouts, voids, failures." },
      { name: "Local", description: "Routes of the local stack only." },
      { name: "Webhooks", description: "Events the engine POSTs to the shop's registered endpoints." },
    ],
  });
  return cached;
}
