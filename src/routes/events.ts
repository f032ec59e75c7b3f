import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { type AppContext, type AppEnv, configOf, type Deps, deps } from "../context";
import { ApiError } from "../errors";
import { saleIdOfOrder } from "../ids";
import { shopperAuth } from "../middleware/shopper-auth";
import { unknownOrder } from "../orders/order-lifecycle";
import type { Lease } from "../realtime/leases";
import { FINAL_ORDER_STATUSES, orderFeed, readOrders, type WatchedOrder } from "../realtime/order-feed";
import { type EventSink, firstEventId, type PumpOptions, pumpEvents } from "../realtime/pump";
import { readSales, saleEvent, saleEventKey, saleFeed } from "../realtime/sale-feed";
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
export function eventStream<T>(
  c: AppContext,
  d: Deps,
  leases: Lease[],
  opts: Omit<PumpOptions<T>, "firstId" | "tickMs" | "pingMs" | "writeTimeoutMs" | "onTick">,
): Response {
  c.header("Cache-Control", "no-store");
  return streamSSE(c, async (stream) => {
    const sink: EventSink = {
      write: (text) => stream.write(text),
      isOpen: () => !stream.aborted && !stream.closed,
      abort: () => stream.abort(),
    };
    try {
      await pumpEvents(sink, {
        ...opts,
        firstId: firstEventId(c.req.header("Last-Event-ID"), Date.now()),
        tickMs: Math.min(d.config.REALTIME_REFRESH_MS, 500),
        pingMs: d.config.REALTIME_PING_MS,
        writeTimeoutMs: WRITE_TIMEOUT_MS,
        onTick: (now) => {
          for (const l of leases) l.touch(now);
        },
      });
    } finally {
      for (const l of leases) l.release();
    }
  });
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
 * isolate's one sale feed (realtime/sale-feed.ts).
 */
export const saleEventRoutes = new Hono<AppEnv>().get("/:saleId/events", async (c) => {
  const d = deps(c);
  const saleId = c.req.param("saleId");
  const feed = saleFeed(d.config.REALTIME_REFRESH_MS);
  const leases = [slotFor(d), feed.watch(saleId, d.now)];
  const first = await holding(leases, async () => {
    let sale = feed.getFresh(saleId, d.now);
    if (!sale) {
      sale = (await readSales(d.redis, [saleId])).get(saleId);
      if (sale) feed.put(saleId, sale, d.now);
    }
    if (!sale) throw new ApiError("UNKNOWN_SALE", "No such sale.");
    return saleEvent(sale, await storeNow(d.redis, d.defer, { refreshMs: d.config.STORE_CLOCK_REFRESH_MS }));
  });
  return eventStream(c, d, leases, {
    event: "sale",
    first,
    async read() {
      await feed.refresh(Date.now(), (ids) => readSales(d.redis, ids));
      const sale = feed.get(saleId);
      return sale
        ? saleEvent(sale, await storeNow(d.redis, d.defer, { refreshMs: d.config.STORE_CLOCK_REFRESH_MS }))
        : null;
    },
    data: (view) => JSON.stringify(view),
    key: saleEventKey,
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
    const mine = (o: WatchedOrder | undefined) => (o && o.userId === userId ? o : undefined);
    const first = await holding(leases, async () => {
      let order = mine(feed.getFresh(orderId, d.now));
      if (!order) {
        order = mine((await readOrders(d, ordersOf([orderId]))).get(orderId));
        if (order) feed.put(orderId, order, d.now);
      }
      if (!order) throw unknownOrder();
      return order.view;
    });
    return eventStream(c, d, leases, {
      event: "order",
      first,
      async read() {
        await feed.refresh(Date.now(), (ids) => readOrders(d, ordersOf(ids)));
        return mine(feed.get(orderId))?.view ?? null;
      },
      data: (view) => JSON.stringify(view),
      key: (view) => view.status,
      final: (view) => FINAL_ORDER_STATUSES.includes(view.status),
    });
  });
