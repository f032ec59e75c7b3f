import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { type AppUnderTest, startApp } from "../../support/app";
import { reserve } from "../../support/lua";
import { commandCounts, commandDelta } from "../../support/redis-inspect";

let app: AppUnderTest;

beforeAll(async () => {
  // a long sold-out memory, so the tests can see what it answers without racing its expiry
  app = await startApp({
    vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", CATALOG_REFRESH_MS: "600000", SOLD_OUT_CACHE_MS: "600000" },
  });
});
afterAll(async () => {
  await app?.stop();
});

const errorCode = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;

async function eventually<T>(call: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await call();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("Idempotency-Key replays", () => {
  it("keys of different users never meet: user a:x with key 1 and user a with key x:1", async () => {
    const sale = await app.api.createSale({ stock: 10 });
    const first = await app.api.buy(sale.productToken, "a:x", 1, { "Idempotency-Key": "1" });
    const second = await app.api.buy(sale.productToken, "a", 1, { "Idempotency-Key": "x:1" });
    expect([first.status, second.status]).toEqual([202, 202]);
    expect(second.body.orderId).not.toBe(first.body.orderId);
    expect((await app.api.stats(sale.saleId)).body).toMatchObject({ remaining: 8 });
  });

  it("user ids that are not well-formed text never meet another user's (a lone surrogate is not U+FFFD)", async () => {
    const sale = await app.api.createSale({ stock: 10, perUserLimit: 1 });
    const key = { "Idempotency-Key": "same" };
    // a shop that cuts user names at 128 UTF-16 units can cut an emoji in half
    const halfEmoji = await app.api.buy(sale.productToken, "shopper-\ud83d", 1, key);
    const replacement = await app.api.buy(sale.productToken, "shopper-\ufffd", 1, key);
    expect(replacement.status, replacement.text).toBe(202);
    if (halfEmoji.status === 202) expect(replacement.body.orderId).not.toBe(halfEmoji.body.orderId);
    else expect([halfEmoji.status, errorCode(halfEmoji.body)]).toEqual([401, "UNAUTHENTICATED"]);
    // and neither sees the other's order
    const seen = await app.api.order(String(replacement.body.orderId), "shopper-\ud83d");
    expect(seen.status).not.toBe(200);
  });

  it("a user id Postgres cannot store (NUL) is refused before anything is reserved", async () => {
    const sale = await app.api.createSale({ stock: 10 });
    const nul = await app.api.buy(sale.productToken, "nul-\u0000-user", 1);
    expect([nul.status, errorCode(nul.body)]).toEqual([401, "UNAUTHENTICATED"]);
    expect(await app.redis.get(saleKeys(sale.saleId).stock)).toBe("10");
  });

  it("a replay counts toward the per-user limit: 429 while over it, the first answer again after", async () => {
    const limited = await startApp({
      vars: { RATE_LIMIT_USER_PER_WINDOW: "3", RATE_LIMIT_WINDOW_SECONDS: "2" },
    });
    try {
      const sale = await limited.api.createSale({ stock: 10 });
      const key = { "Idempotency-Key": "same-click" };
      const first = await limited.api.buy(sale.productToken, "replayer", 1, key);
      expect(first.status).toBe(202);
      for (let i = 0; i < 2; i++) {
        const again = await limited.api.buy(sale.productToken, "replayer", 1, key);
        expect([again.status, again.body.orderId]).toEqual([202, first.body.orderId]);
      }
      const over = await limited.api.buy(sale.productToken, "replayer", 1, key);
      expect([over.status, errorCode(over.body)]).toEqual([429, "RATE_LIMITED"]);
      expect(Number(over.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
      const after = await eventually(
        () => limited.api.buy(sale.productToken, "replayer", 1, key),
        (r) => r.status !== 429,
      );
      expect([after.status, after.body.orderId]).toEqual([202, first.body.orderId]);
      expect((await limited.api.stats(sale.saleId)).body).toMatchObject({ remaining: 9 });
    } finally {
      await limited.stop();
    }
  });

  it("a replay counts toward the per-IP limit too", async () => {
    const limited = await startApp({
      vars: { RATE_LIMIT_IP_PER_WINDOW: "2", RATE_LIMIT_WINDOW_SECONDS: "30" },
    });
    try {
      const sale = await limited.api.createSale({ stock: 10 });
      const headers = { "Idempotency-Key": "ip-click", "CF-Connecting-IP": "203.0.113.9" };
      expect((await limited.api.buy(sale.productToken, "ipr", 1, headers)).status).toBe(202);
      expect((await limited.api.buy(sale.productToken, "ipr", 1, headers)).status).toBe(202);
      const over = await limited.api.buy(sale.productToken, "ipr", 1, headers);
      expect([over.status, errorCode(over.body)]).toEqual([429, "RATE_LIMITED"]);
    } finally {
      await limited.stop();
    }
  });
});

describe("the sold-out memory", () => {
  it("answers a keyed sold-out replay without Redis, and never hides a 202 answered anywhere", async () => {
    const sale = await app.api.createSale({ stock: 2, perUserLimit: 1 });
    // another isolate answered this key 202 (its answer was lost on the way to the shopper)
    const elsewhere = await reserve(app.redis, sale.saleId, {
      orderId: `${sale.saleId}-${"e".repeat(20)}`,
      userId: "lost-answer",
      quantity: 1,
      now: Date.now(),
      idem: "k-lost",
    });
    expect(elsewhere[0]).toBe(1);
    expect((await app.api.buy(sale.productToken, "last-unit", 1)).status).toBe(202);
    // this isolate now knows the sale is sold out
    expect((await app.api.buy(sale.productToken, "late", 1)).status).toBe(410);

    const lost = await app.api.buy(sale.productToken, "lost-answer", 1, { "Idempotency-Key": "k-lost" });
    expect([lost.status, lost.body.orderId]).toEqual([202, elsewhere[1]]);

    const fresh = { "Idempotency-Key": "k-late" };
    const firstAnswer = await app.api.buy(sale.productToken, "keyed-late", 1, fresh);
    expect([firstAnswer.status, errorCode(firstAnswer.body)]).toEqual([410, "SOLD_OUT"]);
    await app.drain();
    const before = await commandCounts(app.redis);
    for (let i = 0; i < 10; i++) {
      const replay = await app.api.buy(sale.productToken, "keyed-late", 1, fresh);
      expect([replay.status, errorCode(replay.body)]).toEqual([410, "SOLD_OUT"]);
    }
    const delta = commandDelta(before, await commandCounts(app.redis));
    expect([delta.evalsha, delta.eval], JSON.stringify(delta)).toEqual([undefined, undefined]);
  });

  it("a replayed 410 says nothing about the sale now: it does not mark the sale sold out again", async () => {
    const sale = await app.api.createSale({ stock: 1, perUserLimit: 1 });
    const held = await app.api.buy(sale.productToken, "holder-r", 1);
    expect(held.status).toBe(202);
    const key = { "Idempotency-Key": "k-stale-410" };
    const first = await app.api.buy(sale.productToken, "keyed-r", 1, key);
    expect([first.status, errorCode(first.body)]).toEqual([410, "SOLD_OUT"]);
    // the unit comes back: this isolate forgets that the sale was sold out
    expect((await app.api.order(String(held.body.orderId), "holder-r", "cancel")).status).toBe(200);
    // the key's first answer is replayed, as the contract says; the sale is not sold out
    const replay = await app.api.buy(sale.productToken, "keyed-r", 1, key);
    expect([replay.status, errorCode(replay.body)]).toEqual([410, "SOLD_OUT"]);
    expect(await app.redis.get(saleKeys(sale.saleId).stock)).toBe("1");
    const other = await app.api.buy(sale.productToken, "unkeyed-r", 1);
    expect(other.status, other.text).toBe(202);
  });

  it("may answer 410 ahead of the window, pause and allowance checks", async () => {
    const sale = await app.api.createSale({ stock: 1, perUserLimit: 1 });
    expect((await app.api.buy(sale.productToken, "holder", 1)).status).toBe(202);
    expect((await app.api.buy(sale.productToken, "someone", 1)).status).toBe(410);
    const held = await app.api.buy(sale.productToken, "holder", 1);
    expect([held.status, errorCode(held.body)]).toEqual([410, "SOLD_OUT"]);
    expect((await app.api.admin("POST", `/sales/${sale.saleId}/pause`)).status).toBe(200);
    const paused = await app.api.buy(sale.productToken, "someone", 1);
    expect([paused.status, errorCode(paused.body)]).toEqual([410, "SOLD_OUT"]);
    expect(await app.redis.get(saleKeys(sale.saleId).stock)).toBe("0");
  });
});
