import { describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { commandCounts, commandDelta } from "../../support/redis-inspect";

/** POST /api/buy/:productToken that sells: the seed-000 walk-through, and what a buy costs in Redis. */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", CATALOG_REFRESH_MS: "600000" } });

/**
 * INFO commandstats counts the commands a script runs inside it too. A delta "is one round trip" when
 * it holds exactly the EVALSHA plus commands that reserve-stock.lua itself calls.
 */
const SCRIPT_INTERNALS = new Set([
  "evalsha",
  "get",
  "set",
  "incr",
  "pexpire",
  "pttl",
  "expire",
  "hget",
  "hmget",
  "hset",
  "hincrby",
  "decrby",
  "zadd",
  "zscore",
]);
const onlyScriptInternals = (delta: Record<string, number>) =>
  Object.keys(delta).every((c) => SCRIPT_INTERNALS.has(c));

const errorCode = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;

describe("POST /api/buy/:productToken — the seed-000 walk-through", () => {
  it("stock 5, limit 2: 101 buys 2, again, 102 buys 2, 103 asks 3, then 2", async () => {
    const sale = await app.api.createSale({ stock: 5, perUserLimit: 2 });
    const t = sale.productToken;
    const first = await app.api.buy(t, "101", 2);
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ status: "queued", quantity: 2 });
    expect(typeof first.body.orderId).toBe("string");
    expect(Number.isNaN(Date.parse(String(first.body.expiresAt)))).toBe(false);

    const again = await app.api.buy(t, "101", 1);
    expect([again.status, errorCode(again.body)]).toEqual([409, "ALREADY_PURCHASED"]);
    expect((await app.api.buy(t, "102", 2)).status).toBe(202);
    const tooMany = await app.api.buy(t, "103", 3);
    expect([tooMany.status, errorCode(tooMany.body)]).toEqual([409, "LIMIT_EXCEEDED"]);
    const short = await app.api.buy(t, "103", 2);
    expect([short.status, errorCode(short.body)]).toEqual([409, "INSUFFICIENT_STOCK"]);
    expect((short.body.error as { remaining: number }).remaining).toBe(1);
    expect((await app.api.buy(t, "103", 1)).status).toBe(202);
    const gone = await app.api.buy(t, "104", 1);
    expect([gone.status, errorCode(gone.body)]).toEqual([410, "SOLD_OUT"]);
  });

  it("answers GET /api/orders/:id as queued to the owner and 404 to anyone else", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    await app.stack.qstash.pause();
    try {
      const res = await app.api.buy(sale.productToken, "poller", 1);
      const orderId = String(res.body.orderId);
      const mine = await app.api.order(orderId, "poller");
      expect(mine.status).toBe(200);
      expect(mine.body).toMatchObject({ orderId, saleId: sale.saleId, quantity: 1, status: "queued" });
      const theirs = await app.api.order(orderId, "someone-else");
      expect([theirs.status, errorCode(theirs.body)]).toEqual([404, "UNKNOWN_ORDER"]);
      const bogus = await app.api.order("not-an-order", "poller");
      expect([bogus.status, errorCode(bogus.body)]).toEqual([404, "UNKNOWN_ORDER"]);
    } finally {
      await app.stack.qstash.resume();
    }
  });
});

describe("costs, measured with INFO commandstats", () => {
  it("one Redis command per admitted attempt; none after sell-out in a warm isolate", async () => {
    const sale = await app.api.createSale({ stock: 3, perUserLimit: 1 });
    await app.api.buy(sale.productToken, "cost-warm", 1);
    await app.drain();
    app.stack.qstash.pause();
    let before = await commandCounts(app.redis);
    const admitted = await app.api.buy(sale.productToken, "cost-1", 1);
    expect(admitted.status).toBe(202);
    const admittedDelta = commandDelta(before, await commandCounts(app.redis));
    expect(admittedDelta.evalsha).toBe(1);
    expect(onlyScriptInternals(admittedDelta), JSON.stringify(admittedDelta)).toBe(true);

    before = await commandCounts(app.redis);
    expect((await app.api.buy(sale.productToken, "cost-1", 1)).status).toBe(409);
    const rejected = commandDelta(before, await commandCounts(app.redis));
    expect(rejected.evalsha, JSON.stringify(rejected)).toBe(1);
    expect(onlyScriptInternals(rejected), JSON.stringify(rejected)).toBe(true);

    await app.api.buy(sale.productToken, "cost-2", 1);
    await app.api.buy(sale.productToken, "cost-3", 1);
    before = await commandCounts(app.redis);
    for (let i = 0; i < 20; i++)
      expect((await app.api.buy(sale.productToken, `late-${i}`, 1)).status).toBe(410);
    // the only commands: the sold-out memory's count flushed to the timeline, at most once a second
    const { hincrby = 0, expire = 0, ...perAttempt } = commandDelta(before, await commandCounts(app.redis));
    expect(perAttempt).toEqual({});
    expect([hincrby, expire].every((n) => n < 20)).toBe(true);
    await app.stack.qstash.resume();
  });
});
