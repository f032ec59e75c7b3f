import { describe, expect, it } from "vitest";
import type { VariantStats } from "../../../src/recovery/variant-stats";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { ADMIN_TOKEN, shopperToken } from "../../support/shopper";
import { createDrop, reserveCart, writeOrder } from "../../support/variants";

/** The operator's figures per variant and the invariant per variant, read through the app. */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" } });

type Stats = {
  stock: number;
  remaining: number;
  liveUnits: number;
  invariantHolds: boolean;
  invariantBreaks: string[];
  variants: VariantStats[];
};

const stats = async (saleId: string) => (await app.api.stats(saleId)).body as unknown as Stats;

const byId = (s: Stats) => Object.fromEntries(s.variants.map(({ variantId, ...rest }) => [variantId, rest]));

/** The variants' figures add up to the sale's. */
function expectSums(s: Stats) {
  const sum = (f: keyof VariantStats) => s.variants.reduce((t, v) => t + Number(v[f]), 0);
  expect([sum("stock"), sum("remaining"), sum("liveUnits")]).toEqual([s.stock, s.remaining, s.liveUnits]);
}

describe("stats per variant", () => {
  it("counts each variant's stock, remaining, live and paid units, adding up to the sale's", async () => {
    const sale = await createDrop(app, [
      { variantId: "a", stock: 5, perUserLimit: 3 },
      { variantId: "b", stock: 3 },
      { variantId: "c", stock: 2 },
    ]);
    const first = await reserveCart(app, sale.saleId, "u1", [
      ["a", 2],
      ["b", 1],
    ]);
    const second = await reserveCart(app, sale.saleId, "u2", [["b", 2]]);
    await reserveCart(app, sale.saleId, "u3", [
      ["a", 1],
      ["c", 1],
    ]);
    const adjusted = await app.api.call("POST", `/api/admin/sales/${sale.saleId}/stock`, {
      token: ADMIN_TOKEN,
      body: { delta: 4, variantId: "c" },
    });
    expect(adjusted.status).toBe(200);
    // all queued: Redis holds every live unit
    let s = await stats(sale.saleId);
    expect(s.invariantHolds, s.invariantBreaks.join("; ")).toBe(true);
    expect(byId(s)).toEqual({
      a: { stock: 5, remaining: 2, paidUnits: 0, liveUnits: 3, pendingRestoreUnits: 0, usersOverLimit: 0 },
      b: { stock: 3, remaining: 0, paidUnits: 0, liveUnits: 3, pendingRestoreUnits: 0, usersOverLimit: 0 },
      c: { stock: 6, remaining: 5, paidUnits: 0, liveUnits: 1, pendingRestoreUnits: 0, usersOverLimit: 0 },
    });
    expectSums(s);
    // two orders written to Postgres, one of them paid, one expired and not yet restored
    await writeOrder(app, sale.saleId, first);
    await writeOrder(app, sale.saleId, second);
    await app.db.query("update orders set status = 'paid', paid_at = now() where id = $1", [first]);
    s = await stats(sale.saleId);
    expect(s.invariantHolds, s.invariantBreaks.join("; ")).toBe(true);
    expect(byId(s)).toMatchObject({
      a: { stock: 5, remaining: 2, paidUnits: 2, liveUnits: 3 },
      b: { stock: 3, remaining: 0, paidUnits: 1, liveUnits: 3 },
      c: { stock: 6, remaining: 5, paidUnits: 0, liveUnits: 1 },
    });
    expectSums(s);
    await app.db.query("update orders set status = 'expired' where id = $1", [second]);
    s = await stats(sale.saleId);
    expect(s.invariantHolds, s.invariantBreaks.join("; ")).toBe(true);
    expect(byId(s).b).toMatchObject({ remaining: 0, liveUnits: 1, pendingRestoreUnits: 2 });
  });

  it("says which variant breaks the invariant, even when the sale's totals add up", async () => {
    const sale = await createDrop(app, [
      { variantId: "x", stock: 4, perUserLimit: 2 },
      { variantId: "y", stock: 4 },
    ]);
    await reserveCart(app, sale.saleId, "u1", [["x", 1]]);
    // one unit moved from y to x in Redis: the sale's remaining is still right
    const keys = saleKeys(sale.saleId);
    await app.redis.hincrby(keys.variantStock, "x", 1);
    await app.redis.hincrby(keys.variantStock, "y", -1);
    let s = await stats(sale.saleId);
    expect(s.invariantHolds).toBe(false);
    expect(s.invariantBreaks).toEqual([
      "variant x: stock 4 ≠ remaining 4 + live 1 + restoring 0",
      "variant y: stock 4 ≠ remaining 3 + live 0 + restoring 0",
    ]);
    await app.redis.hincrby(keys.variantStock, "x", -1);
    await app.redis.hincrby(keys.variantStock, "y", 1);
    expect((await stats(sale.saleId)).invariantHolds).toBe(true);
    // a shopper over the variant's own cap (2), in Redis's holdings per variant
    await app.redis.hset(keys.variantHoldings, "x:greedy", 3);
    s = await stats(sale.saleId);
    expect(s.invariantHolds).toBe(false);
    expect(byId(s).x).toMatchObject({ usersOverLimit: 1 });
    expect(s.invariantBreaks).toContain("variant x: 1 user(s) over its own limit of 2");
  });

  it("finds a shopper over a variant's own cap in Postgres's orders", async () => {
    const sale = await createDrop(app, [
      { variantId: "x", stock: 4, perUserLimit: 1 },
      { variantId: "y", stock: 4 },
    ]);
    // two orders of x for one shopper (the script's cap left out), written; Redis's count put back under it
    for (const _ of [1, 2])
      await writeOrder(app, sale.saleId, await reserveCart(app, sale.saleId, "twice", [["x", 1]]));
    await app.redis.hset(saleKeys(sale.saleId).variantHoldings, "x:twice", 1);
    const s = await stats(sale.saleId);
    expect(byId(s)).toMatchObject({ x: { usersOverLimit: 1, liveUnits: 2 }, y: { usersOverLimit: 0 } });
    expect(s.invariantBreaks).toEqual(["variant x: 1 user(s) over its own limit of 1"]);
  });

  it("shows a sale of one variant as that variant, with the sale's figures", async () => {
    const sale = await app.api.createSale({ stock: 6 });
    await reserveCart(app, sale.saleId, "u1", [["default", 2]], { perVariant: false, priceCents: 4900 });
    const s = await stats(sale.saleId);
    expect(s.invariantHolds, s.invariantBreaks.join("; ")).toBe(true);
    expect(s.variants).toEqual([
      {
        variantId: "default",
        stock: 6,
        remaining: 4,
        paidUnits: 0,
        liveUnits: 2,
        pendingRestoreUnits: 0,
        usersOverLimit: 0,
      },
    ]);
  });
});

describe("reconciliation per variant", () => {
  it("leaves a drop whose variants agree alone", async () => {
    const sale = await createDrop(app, [
      { variantId: "a", stock: 3 },
      { variantId: "b", stock: 3 },
    ]);
    const order = await reserveCart(app, sale.saleId, "u1", [
      ["a", 1],
      ["b", 2],
    ]);
    await writeOrder(app, sale.saleId, order);
    const report = await app.api.admin("POST", `/sales/${sale.saleId}/reconcile`);
    expect(report.status).toBe(200);
    expect(report.body).toMatchObject({ drift: 0, variants: [], paused: false });
  });

  it("reports a variant whose Redis units disagree with Postgres and pauses the sale, overwriting neither", async () => {
    const sale = await createDrop(app, [
      { variantId: "a", stock: 5 },
      { variantId: "b", stock: 5 },
    ]);
    const order = await reserveCart(app, sale.saleId, "u1", [["a", 2]]);
    await writeOrder(app, sale.saleId, order);
    // Redis lost track of two of b's units and counts them for a: the sale's total still adds up
    const keys = saleKeys(sale.saleId);
    await app.redis.hincrby(keys.variantStock, "a", 2);
    await app.redis.hincrby(keys.variantStock, "b", -2);
    const report = await app.api.admin("POST", `/sales/${sale.saleId}/reconcile`);
    expect(report.status).toBe(200);
    expect(report.body).toMatchObject({
      drift: 0,
      variants: [
        { variantId: "a", drift: -2 },
        { variantId: "b", drift: 2 },
      ],
      paused: true,
    });
    expect(await app.redis.hgetall(keys.variantStock)).toEqual({ a: "5", b: "3" });
    const read = await app.api.call("GET", `/api/sales/${sale.saleId}`);
    expect(read.body).toMatchObject({ status: "paused" });
    const audit = await app.api.call<{ entries: { action: string; after?: unknown }[] }>(
      "GET",
      `/api/admin/audit?saleId=${sale.saleId}`,
      { token: ADMIN_TOKEN },
    );
    expect(audit.body.entries.find((e) => e.action === "sale.reconcile")?.after).toMatchObject({
      variantsDrifted: ["a", "b"],
      paused: true,
    });
  });

  it("does not count a drift that moves between its two readings", async () => {
    const sale = await createDrop(app, [
      { variantId: "a", stock: 4 },
      { variantId: "b", stock: 4 },
    ]);
    const keys = saleKeys(sale.saleId);
    await app.redis.hincrby(keys.variantStock, "a", 1);
    await app.redis.hincrby(keys.variantStock, "b", -1);
    // put right while the run waits a moment for its second reading
    const mend = (async () => {
      await new Promise((r) => setTimeout(r, 1000));
      await app.redis.hincrby(keys.variantStock, "a", -1);
      await app.redis.hincrby(keys.variantStock, "b", 1);
    })();
    const report = await app.api.admin("POST", `/sales/${sale.saleId}/reconcile`);
    await mend;
    expect(report.body).toMatchObject({ variants: [], paused: false });
  });
});

describe("a drop bought through the buy route", () => {
  const buy = async (token: string, userId: string, body: unknown) =>
    app.api.call("POST", `/api/buy/${token}`, { token: await shopperToken(userId), body });
  const adjust = (saleId: string, delta: number, variantId: string) =>
    app.api.call<{ error?: { code: string; remaining?: number } }>(
      "POST",
      `/api/admin/sales/${saleId}/stock`,
      {
        token: ADMIN_TOKEN,
        body: { delta, variantId },
      },
    );

  it("counts a cancelled cart's lines back to their variants, once", async () => {
    const sale = await createDrop(app, [
      { variantId: "S", stock: 2 },
      { variantId: "M", stock: 2 },
    ]);
    const cart = await buy(sale.productToken, "c1", {
      items: [
        { variantId: "S", quantity: 1 },
        { variantId: "M", quantity: 2 },
      ],
    });
    expect(cart.status).toBe(202);
    await app.drain();
    expect((await app.api.order(String(cart.body.orderId), "c1", "cancel")).body).toMatchObject({
      status: "cancelled",
    });
    await app.drain();
    const s = await stats(sale.saleId);
    expect(s.invariantHolds, s.invariantBreaks.join("; ")).toBe(true);
    expect(byId(s)).toMatchObject({
      S: { stock: 2, remaining: 2, liveUnits: 0, pendingRestoreUnits: 0 },
      M: { stock: 2, remaining: 2, liveUnits: 0, pendingRestoreUnits: 0 },
    });
    // the units given back can be removed
    expect((await adjust(sale.saleId, -2, "M")).status).toBe(200);
    const report = await app.api.admin("POST", `/sales/${sale.saleId}/reconcile?full=1`);
    expect(report.body).toMatchObject({
      drift: 0,
      variants: [],
      paused: false,
      stats: { invariantHolds: true },
    });
  });

  it("adjusts, counts and reconciles each variant as its carts are bought, written and paid", async () => {
    const sale = await createDrop(app, [
      { variantId: "S", stock: 3 },
      { variantId: "M", stock: 4, perUserLimit: 1 },
    ]);
    const cart = await buy(sale.productToken, "e1", {
      items: [
        { variantId: "S", quantity: 2 },
        { variantId: "M", quantity: 1 },
      ],
    });
    expect(cart.status).toBe(202);
    expect((await buy(sale.productToken, "e2", { variantId: "M", quantity: 1 })).status).toBe(202);
    expect((await buy(sale.productToken, "e3", { variantId: "S", quantity: 1 })).status).toBe(202);
    await app.drain();
    expect((await app.api.order(String(cart.body.orderId), "e1", "pay")).body).toMatchObject({
      status: "paid",
    });
    let s = await stats(sale.saleId);
    expect(s.invariantHolds, s.invariantBreaks.join("; ")).toBe(true);
    expect(byId(s)).toMatchObject({
      S: { stock: 3, remaining: 0, liveUnits: 3, paidUnits: 2 },
      M: { stock: 4, remaining: 2, liveUnits: 2, paidUnits: 1 },
    });
    expectSums(s);
    // S is all reserved; M's two left can go, and then M is sold out for shoppers
    expect((await adjust(sale.saleId, -1, "S")).body.error).toMatchObject({ code: "CONFLICT", remaining: 0 });
    expect((await adjust(sale.saleId, -2, "M")).status).toBe(200);
    expect((await buy(sale.productToken, "e4", { variantId: "M", quantity: 1 })).status).toBe(410);
    // units added to S are bought
    expect((await adjust(sale.saleId, 2, "S")).status).toBe(200);
    expect((await buy(sale.productToken, "e4", { variantId: "S", quantity: 2 })).status).toBe(202);
    await app.drain();
    s = await stats(sale.saleId);
    expect(s.invariantHolds, s.invariantBreaks.join("; ")).toBe(true);
    expect(byId(s)).toMatchObject({
      S: { stock: 5, remaining: 0, liveUnits: 5, paidUnits: 2 },
      M: { stock: 2, remaining: 0, liveUnits: 2, paidUnits: 1 },
    });
    const report = await app.api.admin("POST", `/sales/${sale.saleId}/reconcile?full=1`);
    expect(report.body).toMatchObject({ drift: 0, variants: [], paused: false, mismatched: [] });
  });
});
