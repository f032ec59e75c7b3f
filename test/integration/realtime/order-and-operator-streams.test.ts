import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppUnderTest, startApp } from "../../support/app";
import { ADMIN_TOKEN, shopperToken } from "../../support/shopper";
import { openEvents, type SseReader } from "../../support/sse";

/** The order stream (its owner's only), the operator stream, and the cap on streams. */
let app: AppUnderTest;
const open: SseReader[] = [];

beforeAll(async () => {
  app = await startApp({
    vars: {
      RATE_LIMIT_USER_PER_WINDOW: "1000",
      REALTIME_PING_MS: "1000",
      REALTIME_MAX_STREAMS_PER_IP: "100",
    },
  });
});
afterAll(async () => {
  for (const s of open) s.close();
  await app?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function watchOrder(orderId: string, userId?: string): Promise<SseReader> {
  const headers: Record<string, string> = userId
    ? { Authorization: `Bearer ${await shopperToken(userId)}` }
    : {};
  const s = await openEvents(`${app.worker.url}/api/orders/${orderId}/events`, headers);
  open.push(s);
  return s;
}

const ids = (s: SseReader) => s.events.map((e) => Number(e.id));

describe("the order stream", () => {
  it("sends the Order at once, awaiting_payment after the write, paid, then ends", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    const buy = await app.api.buy(sale.productToken, "rt-owner", 1);
    const orderId = String(buy.body.orderId);
    const s = await watchOrder(orderId, "rt-owner");
    expect(s.status).toBe(200);
    const first = await s.next();
    expect(first.event).toBe("order");
    expect(first.json).toMatchObject({ orderId, saleId: sale.saleId, quantity: 1 });
    expect(["queued", "awaiting_payment"]).toContain(first.json.status);
    await app.drain();
    await s.next((e) => e.json.status === "awaiting_payment", { timeoutMs: 5000 });
    expect((await app.api.order(orderId, "rt-owner", "pay")).status).toBe(200);
    const paid = await s.next((e) => e.json.status === "paid", { timeoutMs: 5000 });
    expect(typeof paid.json.paidAt).toBe("string");
    await s.until(() => s.ended, 5000);
    const seen = ids(s);
    expect(seen.every((id, i) => i === 0 || id > (seen[i - 1] as number))).toBe(true);
  });

  it("is the owner's only: another shopper gets 404 UNKNOWN_ORDER, no token 401, before any stream", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    const orderId = String((await app.api.buy(sale.productToken, "rt-mine", 1)).body.orderId);
    const other = await watchOrder(orderId, "rt-intruder");
    expect([other.status, JSON.parse(other.text).error.code]).toEqual([404, "UNKNOWN_ORDER"]);
    await app.drain();
    const afterWrite = await watchOrder(orderId, "rt-intruder");
    expect(afterWrite.status).toBe(404);
    const anonymous = await watchOrder(orderId);
    expect([anonymous.status, JSON.parse(anonymous.text).error.code]).toEqual([401, "UNAUTHENTICATED"]);
  });
});

async function watchOperator(
  saleId: string,
  token: string | null = ADMIN_TOKEN,
  base = app,
): Promise<SseReader> {
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  const s = await openEvents(`${base.worker.url}/api/admin/sales/${saleId}/events`, headers);
  open.push(s);
  return s;
}

describe("the operator stream", () => {
  it("sends the stats and the timeline at once, then again within a second or two of a buy", async () => {
    const sale = await app.api.createSale({ stock: 10, perUserLimit: 2 });
    const s = await watchOperator(sale.saleId);
    expect(s.status).toBe(200);
    expect(s.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const stats = await s.next((e) => e.event === "stats");
    expect(stats.json).toEqual((await app.api.stats(sale.saleId)).body);
    const timeline = await s.next((e) => e.event === "timeline");
    expect(timeline.json).toMatchObject({ points: [] });

    expect((await app.api.buy(sale.productToken, "rt-op", 2)).status).toBe(202);
    // every frame on the way counts the order once: queued until Postgres has it, then by its status
    const counts: number[] = [];
    const after = await s.next(
      (e) => {
        if (e.event !== "stats") return false;
        counts.push(Number(e.json.queued) + Number(e.json.awaitingPayment));
        return e.json.awaitingPayment === 1;
      },
      { timeoutMs: 8000 },
    );
    expect(after.json).toMatchObject({ stock: 10, remaining: 8, queued: 0, invariantHolds: true });
    expect(counts.filter((n) => n > 1)).toEqual([]);
    const counted = await s.next(
      (e) => e.event === "timeline" && JSON.stringify(e.json).includes('"reserved":1'),
      { timeoutMs: 5000 },
    );
    expect(Number(counted.id)).toBeGreaterThan(Number(stats.id));
  });

  it("is the operator's only, and answers 404 UNKNOWN_SALE, before any stream starts", async () => {
    const sale = await app.api.createSale({ stock: 1 });
    const anonymous = await watchOperator(sale.saleId, null);
    expect([anonymous.status, JSON.parse(anonymous.text).error.code]).toEqual([401, "UNAUTHENTICATED"]);
    const shopper = await watchOperator(sale.saleId, await shopperToken("rt-not-operator"));
    expect(shopper.status).toBe(401);
    const unknown = await watchOperator("s_doesnotexist");
    expect([unknown.status, JSON.parse(unknown.text).error.code]).toEqual([404, "UNKNOWN_SALE"]);
  });
});

describe("the cap on streams", () => {
  let capped: AppUnderTest;
  beforeAll(async () => {
    capped = await startApp({ vars: { REALTIME_MAX_STREAMS: "2", REALTIME_PING_MS: "500" } });
  });
  afterAll(async () => {
    await capped?.stop();
  });

  // A server learns that a client left when it next writes to it: the pings (every 500 ms here) tell.
  it("answers 503 UNAVAILABLE with Retry-After past REALTIME_MAX_STREAMS, and frees a slot on disconnect", async () => {
    const sale = await capped.api.createSale({ stock: 5 });
    const url = `${capped.worker.url}/api/sales/${sale.saleId}/events`;
    const a = await openEvents(url);
    const b = await openEvents(url);
    await Promise.all([a.next(), b.next()]);
    const c = await openEvents(url);
    expect(c.status).toBe(503);
    expect(JSON.parse(c.text).error.code).toBe("UNAVAILABLE");
    expect(Number(c.headers.get("retry-after"))).toBeGreaterThan(0);
    // the operator's stream is not a shopper's: always served
    const operator = await watchOperator(sale.saleId, ADMIN_TOKEN, capped);
    expect(operator.status).toBe(200);
    operator.close();
    a.close();
    let d: SseReader | undefined;
    const closedAt = Date.now();
    for (let i = 0; i < 150 && d?.status !== 200; i++) {
      d?.close();
      await sleep(100);
      d = await openEvents(url);
    }
    expect(d?.status).toBe(200);
    console.log(`slot freed ${Date.now() - closedAt} ms after the client left`);
    b.close();
    d?.close();
  });
});
