import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppUnderTest, startApp } from "../../support/app";
import { ADMIN_TOKEN, shopperToken } from "../../support/shopper";
import { openEvents, type SseReader } from "../../support/sse";

/**
 * The contract's Realtime budgets, on every runtime: anonymous sale streams are bounded in all and per
 * client address, order streams per user (in a budget of their own), the operator's stream is always
 * served; past a budget the route answers 503 with Retry-After; a slot comes back within a second of
 * its client leaving. Pings are left at their default (10 s), so a disconnect is not noticed by a write.
 */
let app: AppUnderTest;
const open: SseReader[] = [];

beforeAll(async () => {
  app = await startApp({
    vars: {
      RATE_LIMIT_USER_PER_WINDOW: "1000",
      REALTIME_MAX_STREAMS: "8",
      REALTIME_MAX_STREAMS_PER_IP: "3",
      REALTIME_MAX_ORDER_STREAMS: "4",
      REALTIME_MAX_STREAMS_PER_USER: "2",
    },
  });
});
afterAll(async () => {
  for (const s of open) s.close();
  await app?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const codeOf = (s: SseReader) => (JSON.parse(s.text) as { error: { code: string } }).error.code;

async function watch(path: string, headers: Record<string, string>): Promise<SseReader> {
  const s = await openEvents(`${app.worker.url}${path}`, headers);
  open.push(s);
  if (s.status === 200) await s.next();
  return s;
}

const saleStream = (saleId: string, ip: string) =>
  watch(`/api/sales/${saleId}/events`, { "CF-Connecting-IP": ip });
const orderStream = async (orderId: string, userId: string) =>
  watch(`/api/orders/${orderId}/events`, {
    Authorization: `Bearer ${await shopperToken(userId)}`,
    "CF-Connecting-IP": "198.51.100.200",
  });
const operatorStream = (saleId: string) =>
  watch(`/api/admin/sales/${saleId}/events`, { Authorization: `Bearer ${ADMIN_TOKEN}` });

function expectRefused(s: SseReader) {
  expect([s.status, codeOf(s)]).toEqual([503, "UNAVAILABLE"]);
  expect(Number(s.headers.get("Retry-After"))).toBeGreaterThan(0);
}

/** Closes this test's streams and lets their slots come back (within a second, as the last test checks). */
async function closeAll() {
  for (const s of open.splice(0)) s.close();
  await sleep(1500);
}

describe("stream budgets", () => {
  it("one client address cannot take every sale stream; the owner's order stream and the operator's are still served", async () => {
    const sale = await app.api.createSale({ stock: 10 });
    const orderId = String((await app.api.buy(sale.productToken, "sb-owner", 1)).body.orderId);
    const mine = await Promise.all([1, 2, 3].map(() => saleStream(sale.saleId, "203.0.113.1")));
    expect(mine.map((s) => s.status)).toEqual([200, 200, 200]);
    expectRefused(await saleStream(sale.saleId, "203.0.113.1"));
    // other addresses fill the process's sale budget (8), then nobody gets a ninth
    for (const ip of ["203.0.113.2", "203.0.113.2", "203.0.113.3", "203.0.113.3", "203.0.113.4"])
      expect((await saleStream(sale.saleId, ip)).status).toBe(200);
    expectRefused(await saleStream(sale.saleId, "203.0.113.5"));

    const order = await orderStream(orderId, "sb-owner");
    expect([order.status, order.events[0]?.event]).toEqual([200, "order"]);
    const operator = await operatorStream(sale.saleId);
    expect([operator.status, operator.events[0]?.event]).toEqual([200, "stats"]);
    await closeAll();
  });

  it("bounds order streams per shopper and in all, apart from the sale streams", async () => {
    const sale = await app.api.createSale({ stock: 10, perUserLimit: 5 });
    const orders: string[] = [];
    for (const user of ["sb-a", "sb-a", "sb-b", "sb-b", "sb-c"])
      orders.push(String((await app.api.buy(sale.productToken, user, 1)).body.orderId));
    const [a1, a2, b1, b2, c1] = orders as [string, string, string, string, string];
    expect((await orderStream(a1, "sb-a")).status).toBe(200);
    expect((await orderStream(a2, "sb-a")).status).toBe(200);
    expectRefused(await orderStream(a1, "sb-a"));
    expect((await orderStream(b1, "sb-b")).status).toBe(200);
    expect((await orderStream(b2, "sb-b")).status).toBe(200);
    expectRefused(await orderStream(c1, "sb-c")); // the order budget (4) is spent
    // the sale streams' budget is another one, and the operator is always served
    expect((await saleStream(sale.saleId, "203.0.113.9")).status).toBe(200);
    expect((await operatorStream(sale.saleId)).status).toBe(200);
    await closeAll();
  });

  it("gives a slot back within a second of its client leaving", async () => {
    const sale = await app.api.createSale({ stock: 10 });
    const held = await Promise.all([1, 2, 3].map(() => saleStream(sale.saleId, "192.0.2.77")));
    expect(held.map((s) => s.status)).toEqual([200, 200, 200]);
    expectRefused(await saleStream(sale.saleId, "192.0.2.77"));
    held[0]?.close();
    const closedAt = Date.now();
    let again = await saleStream(sale.saleId, "192.0.2.77");
    while (again.status !== 200 && Date.now() - closedAt < 20_000) {
      await sleep(50);
      again = await saleStream(sale.saleId, "192.0.2.77");
    }
    const freedAfterMs = Date.now() - closedAt;
    console.log(`${app.runtime}: slot freed ${freedAfterMs} ms after the client left`);
    expect(again.status).toBe(200);
    expect(freedAfterMs).toBeLessThan(1000);
    await closeAll();
  });
});
