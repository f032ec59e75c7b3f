import { createRoute } from "@hono/zod-openapi";
import { apiRouter, json, type RouteContext, SHOPPER } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import {
  challengeSchema,
  drawSchema,
  joinBodySchema,
  MAX_JOIN_BODY_BYTES,
  ticketSchema,
} from "../api/room-schemas";
import { saleIdParam } from "../api/sale-schemas";
import { deps } from "../context";
import { ApiError } from "../http/api-error";
import { jsonBody } from "../middleware/json-body";
import { limited } from "../middleware/rate-limit";
import { shopperAuth } from "../middleware/shopper-auth";
import { joinChallenge } from "../room/challenge";
import { readDraw } from "../room/draw-record";
import { findSale, joinRoom, readTicket, roomDepth, roomNow, type TicketOutcome } from "../room/tickets";

const signedIn = shopperAuth({ deps: (c) => deps(c) });

const challengeRoute = createRoute({
  method: "get",
  path: "/{saleId}/queue/challenge",
  tags: ["Admission"],
  summary: "A proof-of-work challenge to join the queue",
  description:
    "An ALTCHA challenge (SHA-256) bound to the sale and the shopper, expiring in 10 minutes; its `maxnumber` (the difficulty) doubles with every 1,000 tickets taken. Solve it (ALTCHA's widget or altcha-lib's `solveChallenge`) and send the solution as the join's `challenge`.",
  security: SHOPPER,
  middleware: [signedIn, limited("queue-challenge")] as const,
  request: { params: saleIdParam },
  responses: {
    200: json("The challenge.", challengeSchema),
    ...errorResponses("UNAUTHENTICATED", "UNKNOWN_SALE", "NO_QUEUE", "RATE_LIMITED", "UNAVAILABLE"),
  },
});

const joinRoute = createRoute({
  method: "post",
  path: "/{saleId}/queue",
  tags: ["Admission"],
  summary: "Join a sale's queue (or enter its draw)",
  description:
    "Once per shopper: joining again answers the same ticket. A sale with `proofOfWork` first checks the solved challenge (403 CHALLENGE_FAILED, nothing stored). An `open` sale has no queue: 409 NO_QUEUE. A draw takes entries until its start (409 ENTRIES_CLOSED after).",
  security: SHOPPER,
  middleware: [signedIn, limited("queue-join"), jsonBody({ maxBytes: MAX_JOIN_BODY_BYTES })] as const,
  request: {
    params: saleIdParam,
    body: { required: false, content: { "application/json": { schema: joinBodySchema } } },
  },
  responses: {
    200: json("The shopper's ticket.", ticketSchema),
    ...errorResponses(
      "INVALID_REQUEST",
      "UNAUTHENTICATED",
      "CHALLENGE_FAILED",
      "UNKNOWN_SALE",
      "NO_QUEUE",
      "SALE_ENDED",
      "ENTRIES_CLOSED",
      "RATE_LIMITED",
      "UNAVAILABLE",
    ),
  },
});

const meRoute = createRoute({
  method: "get",
  path: "/{saleId}/queue/me",
  tags: ["Admission"],
  summary: "The shopper's ticket",
  description: "The ticket, its verdict and, once admitted, the `Admission` token for the buy.",
  security: SHOPPER,
  middleware: [signedIn, limited("queue-read")] as const,
  request: { params: saleIdParam },
  responses: {
    200: json("The shopper's ticket.", ticketSchema),
    ...errorResponses("UNAUTHENTICATED", "UNKNOWN_SALE", "NO_TICKET", "RATE_LIMITED", "UNAVAILABLE"),
  },
});

const drawRoute = createRoute({
  method: "get",
  path: "/{saleId}/draw",
  tags: ["Admission"],
  summary: "The draw, to verify",
  description:
    'From the creation, `seedHash` = SHA-256(seed). After the start: the seed, the sorted entries (ticket ids) and `entriesHash` = SHA-256(entries joined by "\\n"). The order is the entries sorted by SHA-256(seed + ":" + entry) (hex, lowest first); the first are admitted while units cover them, the rest are the backups, in that order. A `queue` sale shuffles the tickets taken before its start the same way.',
  middleware: [limited("draw-read")] as const,
  request: { params: saleIdParam },
  responses: {
    200: json("The draw.", drawSchema),
    ...errorResponses("UNKNOWN_SALE", "NO_QUEUE", "RATE_LIMITED", "UNAVAILABLE"),
  },
});

/** The one table from a join's or a read's refusal to the contract's error. */
function refusal(outcome: Exclude<TicketOutcome, { kind: "ticket" }>): ApiError {
  switch (outcome.kind) {
    case "unknown_sale":
      return new ApiError("UNKNOWN_SALE", "No such sale.");
    case "no_queue":
      return noQueue();
    case "challenge_failed":
      return new ApiError(
        "CHALLENGE_FAILED",
        "This sale asks for a proof of work: solve GET …/queue/challenge and send the solution as `challenge`.",
      );
    case "no_ticket":
      return new ApiError("NO_TICKET", "You have no ticket for this sale's queue.");
    case "ended":
      return new ApiError("SALE_ENDED", "The sale has ended.");
    case "entries_closed":
      return new ApiError("ENTRIES_CLOSED", "The draw took its entries until the sale's start.");
    case "not_initialised":
      return new ApiError("UNAVAILABLE", "The sale is being restored. Try again shortly.", {
        retryAfterSeconds: 2,
      });
  }
}

const noQueue = () => new ApiError("NO_QUEUE", "This sale admits everyone at once: it has no queue.");

/** `GET /api/sales/:saleId/queue/challenge`: a proof-of-work challenge to join the queue. */
async function getJoinChallenge(c: RouteContext<typeof challengeRoute>) {
  const d = deps(c);
  const { saleId } = c.req.valid("param");
  const now = await roomNow(d);
  const sale = await findSale(d, saleId, now);
  if (!sale) throw refusal({ kind: "unknown_sale" });
  if ((sale.admission ?? "open") === "open") throw noQueue();
  const depth = await roomDepth(d, saleId);
  const challenge = await joinChallenge(d.config, {
    saleId,
    userId: c.get("userId"),
    depth,
    now: Date.now(),
  });
  return c.json(challenge, 200);
}

/** `POST /api/sales/:saleId/queue`: join a sale's queue (or enter its draw). */
async function takeTicket(c: RouteContext<typeof joinRoute>) {
  const { saleId } = c.req.valid("param");
  const { challenge } = c.req.valid("json");
  const outcome = await joinRoom(deps(c), { saleId, userId: c.get("userId"), challenge });
  if (outcome.kind !== "ticket") throw refusal(outcome);
  return c.json(outcome.ticket, 200);
}

/** `GET /api/sales/:saleId/queue/me`: the shopper's ticket. */
async function getOwnTicket(c: RouteContext<typeof meRoute>) {
  const { saleId } = c.req.valid("param");
  const outcome = await readTicket(deps(c), { saleId, userId: c.get("userId") });
  if (outcome.kind !== "ticket") throw refusal(outcome);
  return c.json(outcome.ticket, 200);
}

/** `GET /api/sales/:saleId/draw`: the draw, to verify. */
async function getDraw(c: RouteContext<typeof drawRoute>) {
  const outcome = await readDraw(deps(c), c.req.valid("param").saleId);
  if (outcome.kind === "unknown_sale") throw refusal(outcome);
  if (outcome.kind === "no_queue") throw noQueue();
  return c.json(outcome.draw, 200);
}

/**
 * The waiting room's routes (the contract's Admission): a challenge, the join, the shopper's ticket and
 * the draw record; the ticket stream is routes/room-events.ts.
 */
export const roomRoutes = apiRouter()
  .openapi(challengeRoute, getJoinChallenge)
  .openapi(joinRoute, takeTicket)
  .openapi(meRoute, getOwnTicket)
  .openapi(drawRoute, getDraw);
