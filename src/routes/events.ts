import { createRoute } from "@hono/zod-openapi";
import { apiRouter, type RouteContext, SHOPPER } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { eventStreamResponse, lastEventIdHeaders } from "../api/event-stream";
import { orderIdParam } from "../api/order-schemas";
import { saleIdParam } from "../api/sale-schemas";
import { noticeIfLost } from "../catalog/sale-store";
import { deps } from "../context";
import { saleIdOfOrder } from "../ids";
import { limited } from "../middleware/rate-limit";
import { shopperAuth } from "../middleware/shopper-auth";
import { ownFrame, readOneOrder, readOrders } from "../realtime/order-feed";
import { readSaleFrames } from "../realtime/sale-feed";
import { eventStream, frameStream, holding, slotFor } from "../responses/event-streams";
import { unknownOrder } from "../responses/order-refusals";
import { saleNotFound } from "../responses/sale-refusals";
import { storeNow } from "../stores/store-clock";

const saleEvents = createRoute({
  method: "get",
  path: "/{saleId}/events",
  tags: ["Realtime"],
  summary: "A sale's changes, live",
  description:
    "One `sale` event at once on connect, then on every change of `status`, and of `remaining` at least once a second while it changes. Sale streams have a budget of their own per server (REALTIME_MAX_STREAMS) and per client address (REALTIME_MAX_STREAMS_PER_IP): past either, 503 UNAVAILABLE with Retry-After (poll meanwhile).",
  middleware: [limited("sale-events")] as const,
  request: { params: saleIdParam, headers: lastEventIdHeaders },
  responses: {
    200: eventStreamResponse(
      "`event: sale`, `data:` the sale as shoppers see it, a [Sale](#/components/schemas/Sale) (`productToken` only while live).",
      'event: sale\nid: 1767261600123\ndata: {"saleId":"s4k2x9q1m0abc","name":"Concert tickets","priceCents":4900,"perUserLimit":2,"startsAt":"2026-12-01T10:00:00.000Z","endsAt":"2026-12-01T12:00:00.000Z","status":"live","remaining":118,"serverTime":"2026-12-01T10:00:00.123Z","productToken":"Yk3w0d1oVQm5Qm8wUu0fJm0S2o3m7m5a0b1c2d3e4f5"}\n\n: ping\n\n',
    ),
    ...errorResponses("UNKNOWN_SALE", "RATE_LIMITED", "UNAVAILABLE"),
  },
});

/** `GET /api/sales/:saleId/events`: a sale's changes, live. */
async function streamSaleEvents(c: RouteContext<typeof saleEvents>) {
  const d = deps(c);
  const { saleId } = c.req.valid("param");
  const clock = () => storeNow(d, { refreshMs: d.config.STORE_CLOCK_REFRESH_MS });
  return frameStream(c, d, {
    kind: "sale",
    feed: d.memory.feeds.sales,
    key: saleId,
    readOne: async () => {
      const frame = (await readSaleFrames(d.redis, [saleId], clock)).get(saleId);
      // none: the catalog tells an unknown sale from one lost with its store (503, being rebuilt)
      if (!frame) await noticeIfLost(d, saleId);
      return frame;
    },
    readAll: (ids) => readSaleFrames(d.redis, ids, clock),
    unknown: () => saleNotFound(d, saleId),
  });
}

/** `GET /api/orders/:orderId/events`: an order's status, live. */
async function streamOrderEvents(c: RouteContext<typeof orderEvents>) {
  const d = deps(c);
  const { orderId } = c.req.valid("param");
  const userId = c.get("userId");
  if (!saleIdOfOrder(orderId)) throw unknownOrder();
  const feed = d.memory.feeds.orders;
  const leases = [slotFor(c, d, "order"), feed.watch(orderId, d.now)];
  const first = await holding(leases, async () => {
    if (!ownFrame(feed.getFresh(orderId, d.now), userId)) {
      const read = await readOneOrder(d, orderId, saleIdOfOrder(orderId) ?? "");
      if (!read || !ownFrame(read, userId)) throw unknownOrder();
      feed.put(orderId, read, d.now);
    }
    const frame = ownFrame(feed.get(orderId), userId);
    if (!frame) throw unknownOrder();
    return frame;
  });
  return eventStream(c, d, leases, {
    first,
    current: () => ownFrame(feed.get(orderId), userId) ?? null,
    refresh: (now) => (feed.due(now) ? feed.refresh(now, (ids) => readOrders(d, ordersOf(ids))) : undefined),
  });
}

/**
 * `GET /api/sales/:saleId/events`: the shopper `Sale` at once, then on every change, read through the
 * isolate's one sale feed, which holds each sale's event serialized once (realtime/sale-feed.ts).
 */
export const saleEventRoutes = apiRouter().openapi(saleEvents, streamSaleEvents);

const ordersOf = (ids: string[]) => new Map(ids.map((id) => [id, saleIdOfOrder(id) ?? ""]));

const orderEvents = createRoute({
  method: "get",
  path: "/{orderId}/events",
  tags: ["Realtime"],
  summary: "An order's status, live",
  description:
    "Owner only (anyone else gets 404 UNKNOWN_ORDER before a stream starts). One `order` event at once, then one per status change; the stream ends after `paid`, `expired` or `cancelled`. `EventSource` cannot send the `Authorization` header: read it with `fetch`. Order streams have a budget apart from the sale streams', per server (REALTIME_MAX_ORDER_STREAMS) and per shopper (REALTIME_MAX_STREAMS_PER_USER): past either, 503 UNAVAILABLE with Retry-After.",
  security: SHOPPER,
  middleware: [shopperAuth({ deps: (c) => deps(c) }), limited("order-events")] as const,
  request: { params: orderIdParam, headers: lastEventIdHeaders },
  responses: {
    200: eventStreamResponse(
      "`event: order`, `data:` the shopper's [Order](#/components/schemas/Order). The server ends the stream after the event of a final status (`paid`, `expired`, `cancelled`).",
      'event: order\nid: 1767261600123\ndata: {"orderId":"s4k2x9q1m0abc-0k3j5h7g9f1d3s5a7p9o","saleId":"s4k2x9q1m0abc","quantity":1,"status":"awaiting_payment","createdAt":"2026-12-01T10:00:01.000Z","expiresAt":"2026-12-01T10:10:01.000Z"}\n\nevent: order\nid: 1767261602456\ndata: {"orderId":"s4k2x9q1m0abc-0k3j5h7g9f1d3s5a7p9o","saleId":"s4k2x9q1m0abc","quantity":1,"status":"paid","createdAt":"2026-12-01T10:00:01.000Z","expiresAt":"2026-12-01T10:10:01.000Z","paidAt":"2026-12-01T10:00:03.000Z"}\n\n',
    ),
    ...errorResponses("UNAUTHENTICATED", "UNKNOWN_ORDER", "RATE_LIMITED", "UNAVAILABLE"),
  },
});

/**
 * `GET /api/orders/:orderId/events`: the owner's `Order` at once, then on every status change, read
 * through the isolate's one order feed; ends after a final status. Anyone else gets 404 before a stream.
 */
export const orderEventRoutes = apiRouter().openapi(orderEvents, streamOrderEvents);
