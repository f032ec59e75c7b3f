import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppUnderTest, startApp } from "../../support/app";
import { openEvents, type SseReader } from "../../support/sse";

/**
 * The sale stream: what it sends and when, and what its watchers cost. The order and operator streams:
 * order-and-operator-streams.test.ts.
 */
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

async function watchSale(saleId: string, headers: Record<string, string> = {}): Promise<SseReader> {
  const s = await openEvents(`${app.worker.url}/api/sales/${saleId}/events`, headers);
  open.push(s);
  return s;
}

/** Redis commands executed so far (all kinds), from the server's own counters. */
async function commandCount(): Promise<number> {
  const info = await app.redis.info("commandstats");
  let total = 0;
  for (const m of info.matchAll(/calls=(\d+)/g)) total += Number(m[1]);
  return total;
}

async function commandsPerSecond(seconds: number): Promise<number> {
  const before = await commandCount();
  await sleep(seconds * 1000);
  return ((await commandCount()) - before - 1) / seconds;
}

const ids = (s: SseReader) => s.events.map((e) => Number(e.id));

describe("the sale stream", () => {
  it("sends the Sale at once, then remaining within a second of each buy, with increasing ids", async () => {
    const sale = await app.api.createSale({ stock: 10, perUserLimit: 2 });
    const s = await watchSale(sale.saleId);
    expect(s.status).toBe(200);
    expect(s.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const first = await s.next();
    const polled = await app.api.call("GET", `/api/sales/${sale.saleId}`);
    expect(first.event).toBe("sale");
    expect({ ...first.json, serverTime: 0 }).toEqual({ ...polled.body, serverTime: 0 });
    expect(first.json).toMatchObject({ status: "live", remaining: 10 });

    const buy = await app.api.buy(sale.productToken, "rt-a", 2);
    expect(buy.status).toBe(202);
    const at = Date.now();
    const dropped = await s.next((e) => e.json.remaining === 8, { timeoutMs: 5000 });
    expect(dropped.at - at).toBeLessThan(1000);
    await app.api.buy(sale.productToken, "rt-b", 1);
    await s.next((e) => e.json.remaining === 7, { timeoutMs: 5000 });
    const seen = ids(s);
    expect(seen.every((id, i) => i === 0 || id > (seen[i - 1] as number))).toBe(true);
  });

  it("sends every status change: paused, resumed, sold out", async () => {
    const sale = await app.api.createSale({ stock: 3, perUserLimit: 2 });
    const s = await watchSale(sale.saleId);
    await s.next((e) => e.json.status === "live");
    expect((await app.api.admin("POST", `/sales/${sale.saleId}/pause`)).status).toBe(200);
    await s.next((e) => e.json.status === "paused", { timeoutMs: 3000 });
    expect((await app.api.admin("POST", `/sales/${sale.saleId}/resume`)).status).toBe(200);
    const resumed = s.events.length;
    await s.next((e) => e.json.status === "live", { from: resumed - 0, timeoutMs: 3000 });
    expect((await app.api.buy(sale.productToken, "rt-c", 2)).status).toBe(202);
    expect((await app.api.buy(sale.productToken, "rt-d", 1)).status).toBe(202);
    const soldOut = await s.next((e) => e.json.status === "sold_out", { timeoutMs: 3000 });
    expect(soldOut.json.remaining).toBe(0);
    expect(soldOut.json.productToken).toBeUndefined();
  });

  it("pings, and a reconnect with Last-Event-ID gets the current state first with a larger id", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    const s = await watchSale(sale.saleId);
    await s.next();
    await s.until(() => s.comments.includes("ping"), 5000);
    const last = s.events.at(-1) as { id: string };
    s.close();
    await app.api.buy(sale.productToken, "rt-e", 2);
    const again = await watchSale(sale.saleId, { "Last-Event-ID": last.id });
    const first = await again.next();
    expect(first.event).toBe("sale");
    expect(Number(first.id)).toBeGreaterThan(Number(last.id));
    // the current state: at once, or within the feed's interval when this isolate's snapshot was read
    // a moment before the buy
    await again.next((e) => e.json.remaining === 3, { timeoutMs: 1000 });
  });

  it("keeps a client's ids going up whatever Last-Event-ID it sends: 1e15, past 2^53, 30 digits", async () => {
    const sale = await app.api.createSale({ stock: 10 });
    for (const last of ["1000000000000000", "9007199254740993", "123456789012345678901234567890"]) {
      const s = await watchSale(sale.saleId, { "Last-Event-ID": last });
      const first = await s.next();
      expect(BigInt(first.id)).toBe(BigInt(last) + 1n);
      const remaining = Number(first.json.remaining);
      expect((await app.api.buy(sale.productToken, `rt-big-${last.length}`, 1)).status).toBe(202);
      const next = await s.next((e) => e.json.remaining === remaining - 1, { timeoutMs: 5000 });
      expect(BigInt(next.id)).toBe(BigInt(first.id) + 1n);
      s.close();
      // the reconnect sends the last id it saw: the ids go on above it
      const again = await watchSale(sale.saleId, { "Last-Event-ID": next.id });
      expect(BigInt((await again.next()).id)).toBe(BigInt(next.id) + 1n);
      again.close();
    }
  });

  it("answers 404 UNKNOWN_SALE before any stream starts", async () => {
    const s = await watchSale("s_doesnotexist");
    expect(s.status).toBe(404);
    expect(JSON.parse(s.text).error.code).toBe("UNKNOWN_SALE");
  });

  it("reads the store through one feed per isolate: 50 watchers cost what 1 costs", async () => {
    for (const s of open) s.close();
    await sleep(6000); // the other tests' streams are gone from the feed once their leases went stale
    const perSecondNone = await commandsPerSecond(2);
    const sale = await app.api.createSale({ stock: 100 });
    const one = await watchSale(sale.saleId);
    await one.next();
    await sleep(500);
    const perSecondOne = await commandsPerSecond(3);
    const many = await Promise.all(Array.from({ length: 49 }, () => watchSale(sale.saleId)));
    await Promise.all(many.map((s) => s.next()));
    await sleep(500);
    const perSecondFifty = await commandsPerSecond(3);
    console.log(
      `redis commands/s: no watcher ${perSecondNone.toFixed(1)}, 1 watcher ${perSecondOne.toFixed(1)}, 50 watchers ${perSecondFifty.toFixed(1)}`,
    );
    expect(perSecondFifty).toBeLessThanOrEqual(perSecondOne * 1.5 + 5);
    await app.api.buy(sale.productToken, "rt-f", 1);
    await Promise.all([one, ...many].map((s) => s.next((e) => e.json.remaining === 99, { timeoutMs: 5000 })));
    for (const s of many) s.close();
  });
});
