import { createRoute } from "@hono/zod-openapi";
import { apiRouter, type RouteContext } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { eventStreamResponse, lastEventIdHeaders } from "../api/event-stream";
import { deps } from "../context";
import { ApiError } from "../http/api-error";
import { limited } from "../middleware/rate-limit";
import { readSaleListFrame, SALE_LIST_KEY } from "../realtime/sale-list-feed";
import { frameStream } from "../responses/event-streams";
import { storeNow } from "../stores/store-clock";

const saleListEvents = createRoute({
  method: "get",
  path: "/events",
  tags: ["Realtime"],
  summary: "The list of sales, live",
  description:
    "One `sales` event at once on connect, then on every change of a listed sale's `status`, and of its `remaining` at least once a second while it changes, and when a sale is listed or leaves the list. Counted as a sale stream: the same budgets per server and per client address, 503 UNAVAILABLE with Retry-After past them (poll `GET /api/sales` meanwhile).",
  middleware: [limited("sale-events")] as const,
  request: { headers: lastEventIdHeaders },
  responses: {
    200: eventStreamResponse(
      "`event: sales`, `data:` the body of `GET /api/sales`, a [SaleList](#/components/schemas/SaleList) (live and upcoming sales as shoppers see them).",
      'event: sales\nid: 1767261600123\ndata: {"sales":[{"saleId":"s4k2x9q1m0abc","name":"Concert tickets","priceCents":4900,"perUserLimit":2,"startsAt":"2026-12-01T10:00:00.000Z","endsAt":"2026-12-01T12:00:00.000Z","status":"live","remaining":118,"stock":1000,"paymentWindowSeconds":600,"serverTime":"2026-12-01T10:00:00.123Z","productToken":"Yk3w0d1oVQm5Qm8wUu0fJm0S2o3m7m5a0b1c2d3e4f5"}],"serverTime":"2026-12-01T10:00:00.123Z"}\n\n: ping\n\n',
    ),
    ...errorResponses("RATE_LIMITED", "UNAVAILABLE"),
  },
});

/**
 * `GET /api/sales/events`: the shop's sale list (`GET /api/sales`'s body) at once, then on every change,
 * read through the isolate's one list feed (realtime/sale-list-feed.ts): one read of the sales per
 * refresh interval for every watcher, none per watcher.
 */
async function streamSaleList(c: RouteContext<typeof saleListEvents>) {
  const d = deps(c);
  const clock = () => storeNow(d, { refreshMs: d.config.STORE_CLOCK_REFRESH_MS });
  const read = () => readSaleListFrame(d, clock);
  return frameStream(c, d, {
    kind: "sale",
    feed: d.memory.feeds.saleList,
    key: SALE_LIST_KEY,
    readOne: read,
    readAll: async () => new Map([[SALE_LIST_KEY, await read()]]),
    unknown: () => new ApiError("UNAVAILABLE", "The sales could not be read; try again shortly."),
  });
}

export const saleListEventRoutes = apiRouter().openapi(saleListEvents, streamSaleList);
