import type { z } from "@hono/zod-openapi";
import { createRoute } from "@hono/zod-openapi";
import { apiRouter, json, type RouteContext, SHOPPER } from "../api/api-router";
import {
  buyAcceptedSchema,
  buyBodySchema,
  buyHeaders,
  MAX_BUY_BODY_BYTES,
  productTokenParam,
} from "../api/buy-schemas";
import { errorResponses } from "../api/error-responses";
import { attemptPurchase, type BuyOutcome } from "../buy/attempt";
import type { CartRequest } from "../buy/cart";
import { deps } from "../context";
import { ApiError } from "../http/api-error";
import { jsonBody } from "../middleware/json-body";
import { authenticateShopper } from "../middleware/shopper-auth";

export const buyRoute = createRoute({
  method: "post",
  path: "/{productToken}",
  tags: ["Shopper"],
  summary: "Reserve units of a live sale",
  description:
    "Checks apply in this order, the first that applies being the answer: 400, 401, 404, 403 NOT_ADMITTED (a queue or draw sale without a valid `Admission` header), 429, the sale window and pause (409), ALREADY_PURCHASED, LIMIT_EXCEEDED, INSUFFICIENT_STOCK, SOLD_OUT; a server that already knows the sale is sold out may answer 410 right after the 404 check. A 503 means nothing was reserved. The body is read as JSON whatever its Content-Type; an empty body means quantity 1.",
  security: SHOPPER,
  middleware: [jsonBody({ maxBytes: MAX_BUY_BODY_BYTES })] as const,
  request: {
    params: productTokenParam,
    headers: buyHeaders,
    body: { required: false, content: { "application/json": { schema: buyBodySchema } } },
  },
  responses: {
    202: json("Stock reserved; the order is written to Postgres asynchronously.", buyAcceptedSchema),
    ...errorResponses(
      "INVALID_REQUEST",
      "UNKNOWN_VARIANT",
      "UNAUTHENTICATED",
      "UNKNOWN_PRODUCT",
      "NOT_ADMITTED",
      "RATE_LIMITED",
      "SALE_NOT_STARTED",
      "SALE_ENDED",
      "SALE_PAUSED",
      "ALREADY_PURCHASED",
      "LIMIT_EXCEEDED",
      "INSUFFICIENT_STOCK",
      "SOLD_OUT",
      "UNAVAILABLE",
    ),
  },
});

/**
 * `POST /api/buy/:productToken`: reads the request (400 from the schema, then 401), runs the buy decision
 * (buy/attempt.ts) and answers its outcome through {@link refusal}, the route's one table.
 */
async function buy(c: RouteContext<typeof buyRoute>) {
  const cart = cartRequestOf(c.req.valid("json"));
  const d = deps(c);
  const userId = await authenticateShopper(c.req.header("Authorization"), d, d.memory.verifiedTokens);
  const outcome = await attemptPurchase(d, {
    productToken: c.req.valid("param").productToken,
    userId,
    cart,
    idempotencyKey: c.req.valid("header")["Idempotency-Key"] ?? null,
    clientIp: c.get("clientIp"),
    admission: c.req.valid("header").Admission ?? null,
  });
  if (outcome.kind !== "accepted") throw refusal(outcome);
  if (!outcome.replay) d.metrics?.unitsAdmitted(outcome.quantity);
  const { orderId, expiresAt } = outcome;
  return c.json(
    {
      orderId,
      status: "queued" as const,
      quantity: outcome.quantity,
      expiresAt: new Date(expiresAt).toISOString(),
    },
    202,
  );
}

export const buyRoutes = apiRouter().openapi(buyRoute, buy);

/** The body's lines as one request (a sale's variants decide whether it stands: src/buy/cart.ts). */
export function cartRequestOf(body: z.infer<typeof buyBodySchema>): CartRequest {
  if (body.items) return { kind: "lines", lines: body.items };
  if (body.variantId !== undefined)
    return { kind: "lines", lines: [{ variantId: body.variantId, quantity: body.quantity }] };
  return { kind: "quantity", quantity: body.quantity };
}

/** "Only 1 unit(s) of eu-42 left; eu-43 is gone." for a cart's short lines. */
function shortMessage(lines: { variantId: string; remaining: number }[]): string {
  const parts = lines.map((l) =>
    l.remaining > 0 ? `only ${l.remaining} unit(s) of ${l.variantId} left` : `${l.variantId} is sold out`,
  );
  const sentence = parts.join("; ");
  return `Nothing was reserved: ${sentence}.`;
}

function soldOut(): ApiError {
  return new ApiError("SOLD_OUT", "Sold out: every unit has been reserved.");
}

/** The one table from a refused buy attempt to the contract's error. */
function refusal(outcome: Exclude<BuyOutcome, { kind: "accepted" }>): ApiError {
  switch (outcome.kind) {
    case "unknown_product":
      return new ApiError("UNKNOWN_PRODUCT", "No sale is selling this product.");
    case "unknown_variant":
      return new ApiError("UNKNOWN_VARIANT", "This sale has no such variant.", {
        details: { variantId: outcome.variantId },
      });
    case "variant_required":
      return new ApiError(
        "INVALID_REQUEST",
        "This sale has several variants: say which with variantId, or send items.",
      );
    case "not_admitted":
      return new ApiError(
        "NOT_ADMITTED",
        "This sale admits through its queue: send the Admission token your ticket gave you, while it lasts.",
      );
    case "not_initialised":
      return new ApiError(
        "UNAVAILABLE",
        "The sale is being restored; nothing was reserved. Try again shortly.",
        {
          retryAfterSeconds: 2,
        },
      );
    case "rate_limited":
      return new ApiError("RATE_LIMITED", "Too many attempts; wait before trying again.", {
        retryAfterSeconds: outcome.retryAfterMs / 1000,
        details: { retryAfterSeconds: Math.max(1, Math.ceil(outcome.retryAfterMs / 1000)) },
      });
    case "not_started":
      return new ApiError("SALE_NOT_STARTED", "The sale has not started yet.");
    case "ended":
      return new ApiError("SALE_ENDED", "The sale has ended.");
    case "paused":
      return new ApiError("SALE_PAUSED", "The sale is paused by the shop; try again later.");
    case "restoring":
      return new ApiError(
        "UNAVAILABLE",
        "The sale is being restored; nothing was reserved. Try again shortly.",
        {
          retryAfterSeconds: outcome.retryAfterMs / 1000,
        },
      );
    case "already_purchased":
      return new ApiError("ALREADY_PURCHASED", "You already hold the most units one shopper may buy.", {
        details: { held: outcome.held },
      });
    case "limit_exceeded":
      return new ApiError("LIMIT_EXCEEDED", `You may buy at most ${outcome.mayStillBuy} more unit(s).`, {
        details: { mayStillBuy: outcome.mayStillBuy },
      });
    case "insufficient_stock":
      if (outcome.variants)
        return new ApiError("INSUFFICIENT_STOCK", shortMessage(outcome.variants), {
          details: { remaining: outcome.remaining, variants: outcome.variants },
        });
      return new ApiError("INSUFFICIENT_STOCK", `Only ${outcome.remaining} unit(s) left.`, {
        details: { remaining: outcome.remaining },
      });
    case "sold_out":
      return soldOut();
    case "voided":
      return new ApiError(
        "UNAVAILABLE",
        "The store did not answer in time; nothing was reserved. Try again.",
        {
          retryAfterSeconds: 2,
        },
      );
  }
}
