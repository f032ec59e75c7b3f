import { afterAll, describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { shopperToken } from "../../support/shopper";
import { openEvents, type SseReader } from "../../support/sse";

/**
 * Ticket streams (`GET /api/sales/:saleId/queue/events`) have a budget of their own
 * (REALTIME_MAX_TICKET_STREAMS in all, REALTIME_MAX_TICKET_STREAMS_PER_USER per waiter): a waiting
 * room's crowd fills it, never the order streams' budget, so a shopper who got through and bought is
 * served the order stream while the room is full. On every runtime.
 */
const TICKETS = 3;
const ORDERS = 2;

const app = appForFile({
  vars: {
    RATE_LIMIT_USER_PER_WINDOW: "1000",
    SHOPPER_LIMIT_USER_PER_WINDOW: "1000",
    REALTIME_MAX_ORDER_STREAMS: String(ORDERS),
    REALTIME_MAX_STREAMS_PER_USER: "2",
    REALTIME_MAX_TICKET_STREAMS: String(TICKETS),
    REALTIME_MAX_TICKET_STREAMS_PER_USER: "1",
  },
});

const open: SseReader[] = [];
afterAll(() => {
  for (const s of open) s.close();
});

async function stream(path: string, userId: string): Promise<SseReader> {
  const s = await openEvents(`${app.worker.url}${path}`, {
    Authorization: `Bearer ${await shopperToken(userId)}`,
  });
  open.push(s);
  if (s.status === 200) await s.next();
  return s;
}

function expectRefused(s: SseReader, what: string) {
  expect.soft([what, s.status]).toEqual([what, 503]);
  if (s.status !== 503) return;
  expect((JSON.parse(s.text) as { error: { code: string } }).error.code).toBe("UNAVAILABLE");
  expect(Number(s.headers.get("Retry-After"))).toBeGreaterThan(0);
}

describe("ticket streams have their own budget", () => {
  it("a full waiting room leaves the order streams' budget to the shoppers who bought", async () => {
    const room = await app.api.createSale({ admission: "queue", stock: 2 });
    const shop = await app.api.createSale({ stock: 5 });
    const orders: [string, string][] = [];
    for (const buyer of ["bought-1", "bought-2"]) {
      const res = await app.api.buy(shop.productToken, buyer);
      expect(res.status).toBe(202);
      orders.push([String(res.body.orderId), buyer]);
    }
    const waiters = Array.from({ length: TICKETS + 2 }, (_, i) => `waiter-${i}`);
    for (const w of waiters) {
      const joined = await app.api.call("POST", `/api/sales/${room.saleId}/queue`, {
        token: await shopperToken(w),
        body: {},
      });
      expect(joined.status).toBe(200);
    }
    const ticketPath = `/api/sales/${room.saleId}/queue/events`;

    const first = await stream(ticketPath, waiters[0] as string);
    expect(first.status).toBe(200);
    expect(first.events[0]?.event).toBe("ticket");
    // per waiter: a second tab of the same waiter is past its share
    expectRefused(await stream(ticketPath, waiters[0] as string), "a second tab");

    const rest = [];
    for (const w of waiters.slice(1)) rest.push(await stream(ticketPath, w));
    expect
      .soft([first, ...rest].map((s) => s.status))
      .toEqual([...Array(TICKETS).fill(200), ...Array(waiters.length - TICKETS).fill(503)]);
    for (const s of rest.filter((s) => s.status !== 200)) expectRefused(s, "past the budget");

    // the room is full; the order streams' budget is whole
    for (const [orderId, buyer] of orders) {
      const s = await stream(`/api/orders/${orderId}/events`, buyer);
      expect.soft([orderId, s.status]).toEqual([orderId, 200]);
      if (s.status === 200) expect(s.events[0]?.event).toBe("order");
    }
  });
});
