import { createRoute } from "@hono/zod-openapi";
import { apiRouter, json, SHOPPER } from "../api/api-router";
import {
  buyAcceptedSchema,
  buyBodySchema,
  buyHeaders,
  MAX_BUY_BODY_BYTES,
  productTokenParam,
} from "../api/buy-schemas";
import { errorResponses } from "../api/error-responses";
import { jsonBody } from "../api/json-body";
import { deps } from "../context";
import { ApiError, StoreUnavailableError } from "../errors";
import { newOrderId } from "../ids";
import { authenticateShopper } from "../middleware/shopper-auth";
import { publishSoon } from "../orders/publish-buffer";
import { resolveUnanswered } from "../orders/void-order";
import { CatalogMissingError, resolveProductToken } from "../sale/catalog";
import { clientIp } from "../sale/client-ip";
import { countSoldOutFromMemory } from "../sale/memory-answers";
import { looksLikeProductToken } from "../sale/product-token";
import { recoverLostSales } from "../sale/recover-sales";
import type { ReserveOutcome } from "../sale/reserve-outcome";
import { reserveStock } from "../sale/reserve-stock";
import { soldOutCache } from "../sale/sold-out-cache";
import { storeNow } from "../sale/store-clock";

export const buyRoute = createRoute({
  method: "post",
  path: "/{productToken}",
  tags: ["Shopper"],
  summary: "Reserve units of a live sale",
  description:
    "Checks apply in this order, the first that applies being the answer: 400, 401, 404, 429, the sale window and pause (409), ALREADY_PURCHASED, LIMIT_EXCEEDED, INSUFFICIENT_STOCK, SOLD_OUT; a server that already knows the sale is sold out may answer 410 right after the 404 check. A 503 means nothing was reserved. The body is read as JSON whatever its Content-Type; an empty body means quantity 1.",
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
      "UNAUTHENTICATED",
      "UNKNOWN_PRODUCT",
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
 * `POST /api/buy/:productToken`: the contract's checks in order (400, 401, 404, then one reservation
 * script for 429 / window / allowance / stock). An admitted attempt costs one Redis command; an unknown
 * token costs none (Bloom filter), and so does an attempt on a sale this isolate saw sold out (keyed
 * attempts only when their key's recorded answer is that 410, see sold-out-cache.ts). A reservation
 * whose outcome is unknown is resolved before the answer (see reserve-stock.ts), and one still unknown
 * when the window ends is voided (see void-order.ts): a 503 means nothing was reserved.
 */
export const buyRoutes = apiRouter().openapi(buyRoute, async (c) => {
  const d = deps(c);
  const { config, redis, defer } = d;
  const { quantity } = c.req.valid("json");
  const idempotencyKey = c.req.valid("header")["Idempotency-Key"] ?? null;
  const userId = await authenticateShopper(c.req.header("Authorization"), config);

  const token = c.req.valid("param").productToken;
  const saleId = looksLikeProductToken(token)
    ? await resolveProductToken(redis, token, {
        now: d.now,
        refreshMs: config.CATALOG_REFRESH_MS,
        defer,
      }).catch((e) => {
        if (e instanceof CatalogMissingError) defer(recoverLostSales(d));
        throw e;
      })
    : null;
  if (!saleId) throw new ApiError("UNKNOWN_PRODUCT", "No sale is selling this product.");
  const now = await storeNow(redis, defer, { refreshMs: config.STORE_CLOCK_REFRESH_MS });
  const keyed = idempotencyKey === null ? undefined : { userId, idempotencyKey };
  if (soldOutCache.has(saleId, now, keyed)) {
    countSoldOutFromMemory(redis, saleId, now, defer);
    throw soldOut();
  }

  const attempt = { saleId, orderId: newOrderId(saleId), userId, quantity, idempotencyKey };
  const outcome = await reserveStock(
    redis,
    { ...attempt, ip: clientIp(c.get("clientIp")), now },
    {
      userPerWindow: config.RATE_LIMIT_USER_PER_WINDOW,
      ipPerWindow: config.RATE_LIMIT_IP_PER_WINDOW,
      windowMs: config.RATE_LIMIT_WINDOW_SECONDS * 1000,
    },
    undefined,
    config.BUY_RESOLVE_WINDOW_MS,
  ).catch(async (error): Promise<ReserveOutcome> => {
    if (!(error instanceof StoreUnavailableError)) throw error;
    // no run answered within the window: void the attempt (or find it claimed) before answering
    const settled = await resolveUnanswered(d, attempt);
    if (settled.kind === "voided") return settled;
    return { kind: "reserved", ...settled.order, remaining: 0, replay: true, pending: false };
  });
  if (outcome.kind === "not_initialised") defer(recoverLostSales(d));
  if (outcome.kind !== "reserved") {
    if (outcome.kind === "sold_out") {
      // a replayed 410 is the key's first answer, not news: the units may have come back since
      if (!outcome.replay) soldOutCache.mark(saleId, now, config.SOLD_OUT_CACHE_MS);
      if (keyed) soldOutCache.rememberKey(saleId, userId, keyed.idempotencyKey);
    }
    if (outcome.kind === "insufficient_stock") soldOutCache.clear(saleId);
    throw rejection(outcome);
  }
  // a replay's `remaining` is the first answer's, possibly stale: it says nothing about the stock now
  if (!outcome.replay) {
    if (outcome.remaining === 0) soldOutCache.mark(saleId, now, config.SOLD_OUT_CACHE_MS);
    else soldOutCache.clear(saleId);
  }
  const order = {
    orderId: outcome.orderId,
    saleId,
    userId,
    quantity: outcome.quantity,
    createdAt: now,
    expiresAt: outcome.expiresAt,
    epoch: outcome.epoch,
  };
  // a replay whose order is still in the outbox may be the only copy of it (its first publish lost)
  if (!outcome.replay || outcome.pending) defer(publishSoon(d, order));
  return c.json(
    {
      orderId: outcome.orderId,
      status: "queued" as const,
      quantity: outcome.quantity,
      expiresAt: new Date(outcome.expiresAt).toISOString(),
    },
    202,
  );
});

function soldOut(): ApiError {
  return new ApiError("SOLD_OUT", "Sold out: every unit has been reserved.");
}

/** The one table from a refused reservation to the contract's error. */
function rejection(outcome: Exclude<ReserveOutcome, { kind: "reserved" }>): ApiError {
  switch (outcome.kind) {
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
