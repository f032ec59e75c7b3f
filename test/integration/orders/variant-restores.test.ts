import { afterEach, describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { untilRebuilt } from "../../support/recovery";
import { shopperToken } from "../../support/shopper";
import { createDrop } from "../../support/variants";

/*
 * End to end on a drop of three variants: carts bought through the buy route, written by the order
 * pipeline, then cancelled, expired, cancelled while still queued, or carried through a Redis that came
 * back empty. Each line's units come back to its own variant exactly once, and the variants' units
 * always add up to the sale's.
 */

const app = appForFile({
  vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", RECOVERY_QUIET_SECONDS: "1", OUTBOX_GRACE_SECONDS: "1" },
});
afterEach(() => {
  app?.stack.qstash.resume();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Cart = Record<string, number>;

async function drop(overrides: Record<string, unknown> = {}) {
  const variants = [
    { variantId: "S", name: "Small", priceCents: 1000, stock: 5 },
    { variantId: "M", name: "Medium", priceCents: 1200, stock: 4 },
    { variantId: "L", name: "Large", priceCents: 1500, stock: 3 },
  ];
  return createDrop(app, variants, { perUserLimit: 10, ...overrides });
}

async function buyCart(productToken: string, userId: string, cart: Cart): Promise<string> {
  const items = Object.entries(cart).map(([variantId, quantity]) => ({ variantId, quantity }));
  const res = await app.api.call("POST", `/api/buy/${productToken}`, {
    token: await shopperToken(userId),
    body: { items },
  });
  expect(res.status, res.text).toBe(202);
  return String(res.body.orderId);
}

/** The drop's Redis state, after checking that it balances: vstock adds up to stock, vholdings to holdings. */
async function balanced(saleId: string) {
  const k = saleKeys(saleId);
  const nums = (h: Record<string, string>) =>
    Object.fromEntries(Object.entries(h).map(([f, v]) => [f, Number(v)]));
  const stock = Number(await app.redis.get(k.stock));
  const holdings = nums(await app.redis.hgetall(k.holdings));
  const vstock = nums(await app.redis.hgetall(k.variantStock));
  const vholdings = nums(await app.redis.hgetall(k.variantHoldings));
  expect(
    Object.values(vstock).reduce((a, b) => a + b, 0),
    "vstock adds up to stock",
  ).toBe(stock);
  const perUser: Record<string, number> = {};
  for (const [field, units] of Object.entries(vholdings)) {
    const user = field.slice(field.indexOf(":") + 1);
    perUser[user] = (perUser[user] ?? 0) + units;
  }
  expect(perUser, "vholdings add up to holdings").toEqual(holdings);
  return { stock, holdings, vstock, vholdings };
}

describe("a drop's carts given back, end to end", () => {
  it("a written cart cancelled by its shopper: each line back to its variant, once", async () => {
    const sale = await drop();
    const ana = await buyCart(sale.productToken, "ana", { S: 2, M: 1 });
    await buyCart(sale.productToken, "bo", { L: 2, M: 1 });
    await app.drain();
    expect((await app.api.order(ana, "ana")).body.status).toBe("awaiting_payment");
    expect(await balanced(sale.saleId)).toMatchObject({ stock: 6, vstock: { S: 3, M: 2, L: 1 } });

    const cancels = await Promise.all([1, 2, 3].map(() => app.api.order(ana, "ana", "cancel")));
    expect(cancels.some((r) => r.status === 200 && r.body.status === "cancelled")).toBe(true);
    expect(await balanced(sale.saleId)).toEqual({
      stock: 9,
      holdings: { bo: 3 },
      vstock: { S: 5, M: 3, L: 1 },
      vholdings: { "L:bo": 2, "M:bo": 1 },
    });
    await app.drain();
    expect((await balanced(sale.saleId)).vstock).toEqual({ S: 5, M: 3, L: 1 });
    const view = (await app.api.call("GET", `/api/sales/${sale.saleId}`)).body as {
      variants: { variantId: string; remaining: number }[];
    };
    expect(view.variants.map((v) => [v.variantId, v.remaining])).toEqual([
      ["S", 5],
      ["M", 3],
      ["L", 1],
    ]);
  });

  it("an unpaid cart expires by the pipeline: each line back to its variant, once", async () => {
    const sale = await drop({ paymentWindowSeconds: 2 });
    const cy = await buyCart(sale.productToken, "cy", { M: 3, L: 1 });
    expect(await balanced(sale.saleId)).toMatchObject({ stock: 8, vstock: { S: 5, M: 1, L: 2 } });
    await app.drain();
    const deadline = Date.now() + 40_000;
    while ((await app.api.order(cy, "cy")).body.status !== "expired" && Date.now() < deadline)
      await sleep(250);
    expect((await app.api.order(cy, "cy")).body.status).toBe("expired");
    let state = await balanced(sale.saleId);
    while (state.stock !== 12 && Date.now() < deadline) {
      await sleep(250);
      state = await balanced(sale.saleId);
    }
    expect(state).toEqual({ stock: 12, holdings: {}, vstock: { S: 5, M: 4, L: 3 }, vholdings: {} });
  });

  it("a cart cancelled while still queued is not counted again when its write lands", async () => {
    const sale = await drop();
    app.stack.qstash.pause();
    const dee = await buyCart(sale.productToken, "dee", { S: 1, L: 3 });
    expect((await app.api.order(dee, "dee", "cancel")).body.status).toBe("cancelled");
    expect(await balanced(sale.saleId)).toEqual({
      stock: 12,
      holdings: {},
      vstock: { S: 5, M: 4, L: 3 },
      vholdings: {},
    });
    app.stack.qstash.resume();
    await app.drain();
    expect(await balanced(sale.saleId)).toEqual({
      stock: 12,
      holdings: {},
      vstock: { S: 5, M: 4, L: 3 },
      vholdings: {},
    });
  });

  it("Redis comes back empty: rebuilt per variant from the written carts, then a cancel gives its lines back", async () => {
    const sale = await drop();
    const eve = await buyCart(sale.productToken, "eve", { S: 3, M: 2 });
    await buyCart(sale.productToken, "fay", { M: 1, L: 3 });
    await app.drain();
    const before = await balanced(sale.saleId);
    expect(before).toMatchObject({ stock: 3, vstock: { S: 2, M: 1, L: 0 } });

    await app.stack.redis.restart({ empty: true });
    await app.reconnect();
    await untilRebuilt(app, sale.saleId);
    expect(await balanced(sale.saleId)).toEqual(before);

    expect((await app.api.order(eve, "eve", "cancel")).body.status).toBe("cancelled");
    expect(await balanced(sale.saleId)).toEqual({
      stock: 8,
      holdings: { fay: 4 },
      vstock: { S: 5, M: 3, L: 0 },
      vholdings: { "M:fay": 1, "L:fay": 3 },
    });
  });
});
