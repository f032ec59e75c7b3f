import { Hono } from "hono";
import { type AppContext, type AppEnv, configOf, type Deps, deps } from "../context";
import { ApiError } from "../errors";
import { saleIdOfOrder } from "../ids";
import { shopperAuth } from "../middleware/shopper-auth";
import { unknownOrder } from "../orders/order-lifecycle";
import type { Lease } from "../realtime/leases";
import { orderFeed, ownFrame, readOrders } from "../realtime/order-feed";
import { firstEventId, type PumpOptions, pumpEvents } from "../realtime/pump";
import { readSaleFrames, saleFeed } from "../realtime/sale-feed";
import { sseBody } from "../realtime/sse-body";
import { takeStreamSlot } from "../realtime/stream-slots";
import { storeNow } from "../sale/store-clock";

const WRITE_TIMEOUT_MS = 4_000;

/** A slot for one more stream, or 503 UNAVAILABLE with Retry-After (before any stream starts). */
export function slotFor(d: Deps): Lease {
  const slot = takeStreamSlot(d.config.REALTIME_MAX_STREAMS, d.now);
  if (!slot)
    throw new ApiError("UNAVAILABLE", "Too many live streams here right now; poll or retry shortly.", {
      retryAfterSeconds: 5,
    });
  return slot;
}

/**
 * Streams `opts` as Server-Sent Events on this request's own loop (see realtime/pump.ts); the leases are
 * touched on every tick and released when the stream ends.
 */
export function eventStream(
  c: AppContext,
  d: Deps,
  leases: Lease[],
  opts: Pick<PumpOptions, "first" | "current" | "refresh">,
): Response {
  const { body, sink, end } = sseBody();
  const pumping = pumpEvents(sink, {
    ...opts,
    firstId: firstEventId(c.req.header("Last-Event-ID"), Date.now()),
    tickMs: Math.min(d.config.REALTIME_REFRESH_MS, 500),
    pingMs: d.config.REALTIME_PING_MS,
    writeTimeoutMs: WRITE_TIMEOUT_MS,
    onTick: (now) => {
      for (const l of leases) l.touch(now);
    },
  })
    .catch((error: unknown) => console.error("event stream", error))
    .finally(() => {
      for (const l of leases) l.release();
      end();
    });
  // not handed to waitUntil / the task set: a stream lives as long as its client, and must not hold a
  // server's shutdown; its own timers keep it going while the response body is read
  void pumping;
  return c.body(body, 200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store" });
}

/** Runs `open` holding `leases`; releases them if it fails (the route answers an error instead). */
export async function holding<T>(leases: Lease[], open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    for (const l of leases) l.release();
    throw error;
  }
}

/**
 * `GET /api/sales/:saleId/events`: the shopper `Sale` at once, then on every change, read through the
 * isolate's one sale feed, which holds each sale's event serialized once (realtime/sale-feed.ts).
 */
export const saleEventRoutes = new Hono<AppEnv>().get("/:saleId/events", async (c) => {
  const d = deps(c);
  const saleId = c.req.param("saleId");
  const feed = saleFeed(d.config.REALTIME_REFRESH_MS);
  const clock = () => storeNow(d.redis, d.defer, { refreshMs: d.config.STORE_CLOCK_REFRESH_MS });
  const leases = [slotFor(d), feed.watch(saleId, d.now)];
  const first = await holding(leases, async () => {
    if (!feed.getFresh(saleId, d.now)) {
      const read = (await readSaleFrames(d.redis, [saleId], clock)).get(saleId);
      if (!read) throw new ApiError("UNKNOWN_SALE", "No such sale.");
      feed.put(saleId, read, d.now);
    }
    const frame = feed.get(saleId);
    if (!frame) throw new ApiError("UNKNOWN_SALE", "No such sale.");
    return frame;
  });
  return eventStream(c, d, leases, {
    first,
    current: () => feed.get(saleId) ?? null,
    refresh: (now) =>
      feed.due(now) ? feed.refresh(now, (ids) => readSaleFrames(d.redis, ids, clock)) : undefined,
  });
});

const ordersOf = (ids: string[]) => new Map(ids.map((id) => [id, saleIdOfOrder(id) ?? ""]));

/**
 * `GET /api/orders/:orderId/events`: the owner's `Order` at once, then on every status change, read
 * through the isolate's one order feed; ends after a final status. Anyone else gets 404 before a stream.
 */
export const orderEventRoutes = new Hono<AppEnv>()
  .use("/:orderId/events", shopperAuth({ settings: (c) => configOf(c) }))
  .get("/:orderId/events", async (c) => {
    const d = deps(c);
    const orderId = c.req.param("orderId");
    const userId = c.get("userId");
    if (!saleIdOfOrder(orderId)) throw unknownOrder();
    const feed = orderFeed(d.config.REALTIME_REFRESH_MS * 2);
    const leases = [slotFor(d), feed.watch(orderId, d.now)];
    const first = await holding(leases, async () => {
      if (!ownFrame(feed.getFresh(orderId, d.now), userId)) {
        const read = (await readOrders(d, ordersOf([orderId]))).get(orderId);
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
      refresh: (now) =>
        feed.due(now) ? feed.refresh(now, (ids) => readOrders(d, ordersOf(ids))) : undefined,
    });
  });
