import { createRoute, z } from "@hono/zod-openapi";
import { apiRouter, OPERATOR, type RouteContext } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { saleIdParam } from "../api/sale-schemas";
import { readSale } from "../catalog/sale-store";
import { deps } from "../context";
import { ApiError } from "../http/api-error";
import { figuresFrame, readFigureFrames, readSaleFigures } from "../realtime/stats-feed";
import { frameStream } from "../responses/event-streams";

const EXAMPLE = `event: stats
id: 1795000000000
data: {"stock":1000,"remaining":880,"queued":3,"awaitingPayment":40,"paid":70,"expired":5,"cancelled":2,"ordersInDb":117,"ledgerEntries":125,"liveUnits":120,"pendingRestoreUnits":0,"usersOverLimit":0,"invariantHolds":true,"invariantBreaks":[]}

event: timeline
id: 1795000000001
data: {"points":[{"second":1795000000,"counts":{"reserved":12,"soldOut":3}}],"serverTime":"2026-11-19T08:26:40.000Z"}

: ping

`;

const operatorEvents = createRoute({
  method: "get",
  path: "/sales/{saleId}/events",
  tags: ["Realtime"],
  security: OPERATOR,
  summary: "A sale's figures as they change (Server-Sent Events)",
  description: `A \`text/event-stream\` for the operator page. \`event: stats\` carries the body of \`GET /api/admin/sales/{saleId}/stats\` (SaleStats) and \`event: timeline\` the body of \`GET /api/admin/sales/{saleId}/timeline\` (Timeline): both at once on connect, then each whenever it changes (read at most once a second, shared by every operator page this server streams to). Every event has an increasing \`id:\`; a \`: ping\` comment comes after REALTIME_PING_MS without events (10 s on Deno and Bun, 500 ms on Workers, where a write is how a disconnect is noticed). A client reconnecting with \`Last-Event-ID\` gets the current state first, with ids above it. It needs the operator token in a header, so pages read it with \`fetch\` rather than \`EventSource\`. Errors (401, 404, 503 when a store is unavailable) come as JSON before the stream starts; it is never refused for the number of streams open (the shoppers' stream budgets do not apply to it).`,
  request: {
    params: saleIdParam,
    headers: z.object({
      "Last-Event-ID": z
        .string()
        .optional()
        .openapi({
          param: { name: "Last-Event-ID", in: "header" },
          description: "The last event id a reconnecting client saw; the new stream's ids are above it.",
          example: "1795000000001",
        }),
    }),
  },
  responses: {
    200: {
      description: "The stream: `stats` and `timeline` events, `: ping` comments.",
      headers: { "Cache-Control": { schema: { type: "string" as const, example: "no-store" } } },
      content: {
        "text/event-stream": {
          schema: z.string().openapi({
            description:
              "Events `event: stats` / `event: timeline`, each with `id:` and one `data:` line of JSON (SaleStats / Timeline).",
            example: EXAMPLE,
          }),
        },
      },
    },
    ...errorResponses("UNAUTHENTICATED", "UNKNOWN_SALE", "UNAVAILABLE"),
  },
});

/**
 * `GET /api/admin/sales/:saleId/events` (operator token, checked by the app for `/api/admin/*`):
 * `event: stats` and `event: timeline`, at once and then whenever they change, read through the
 * isolate's one operator feed (realtime/stats-feed.ts). Always served: no shopper's stream budget
 * applies to it.
 */
async function streamOperatorEvents(c: RouteContext<typeof operatorEvents>) {
  const d = deps(c);
  const { saleId } = c.req.valid("param");
  return frameStream(c, d, {
    kind: "operator",
    feed: d.memory.feeds.stats,
    key: saleId,
    exists: async () => (await readSale(d.redis, saleId)) !== null,
    readOne: async () => figuresFrame(await readSaleFigures(d, saleId, d.now)),
    readAll: (ids) => readFigureFrames(d, ids, Date.now()),
    unknown: () => new ApiError("UNKNOWN_SALE", "No such sale."),
  });
}

export const adminEventRoutes = apiRouter().openapi(operatorEvents, streamOperatorEvents);
