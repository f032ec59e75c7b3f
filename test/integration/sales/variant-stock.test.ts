import { describe, expect, it } from "vitest";
import { adjustmentIdForKey } from "../../../src/sales/stock-adjustment";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { failAdjustmentWrites as refuseAdjustmentWrites } from "../../support/db-faults";
import { ADMIN_TOKEN, shopperToken } from "../../support/shopper";
import { createDrop, reserveCart, type VariantSpec } from "../../support/variants";

/** Operator stock adjustments of one variant of a drop, through the app, against real Redis and Postgres. */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" } });

type Body = Record<string, unknown> & { error?: { code?: string; message?: string; [k: string]: unknown } };

const drop = (variants: VariantSpec[]) => createDrop(app, variants);
const reserve = (saleId: string, userId: string, lines: [string, number][]) =>
  reserveCart(app, saleId, userId, lines);

function adjust(saleId: string, body: Record<string, unknown>, key?: string) {
  return app.api.call<Body>("POST", `/api/admin/sales/${saleId}/stock`, {
    token: ADMIN_TOKEN,
    body,
    headers: key === undefined ? {} : { "Idempotency-Key": key },
  });
}

/** A drop's units as each store holds them: the sale's and each variant's. */
async function figures(saleId: string) {
  const keys = saleKeys(saleId);
  const sale = await app.db.query<{ stock: number; adjustments: number }>(
    "select initial_stock + stock_adjustments as stock, stock_adjustments as adjustments from sales where id = $1",
    [saleId],
  );
  const variants = await app.db.query<{ variant_id: string; stock: number; adjustments: number }>(
    `select variant_id, initial_stock + stock_adjustments as stock, stock_adjustments as adjustments
     from sale_variants where sale_id = $1 order by position`,
    [saleId],
  );
  return {
    redis: {
      stock: Number(await app.redis.hget(keys.meta, "stock")),
      remaining: Number(await app.redis.get(keys.stock)),
      variants: Object.fromEntries(
        Object.entries(await app.redis.hgetall(keys.variantStock)).map(([k, v]) => [k, Number(v)]),
      ),
    },
    db: {
      stock: Number(sale.rows[0]?.stock),
      variants: Object.fromEntries(variants.rows.map((r) => [r.variant_id, Number(r.stock)])),
      recorded: Number(
        (
          await app.db.query<{ n: number }>(
            "select coalesce(sum(delta), 0)::int as n from stock_adjustments where sale_id = $1",
            [saleId],
          )
        ).rows[0]?.n,
      ),
    },
  };
}

const failAdjustmentWrites = (on: boolean) => refuseAdjustmentWrites(app.db, on);

const variantOf = (body: Body, id: string) =>
  (body.variants as { variantId: string; remaining: number; status: string }[]).find(
    (v) => v.variantId === id,
  );

describe("stock adjustments of a drop's variants", () => {
  it("adds to and removes from one variant: its units and the sale's move together in both stores", async () => {
    const sale = await drop([
      { variantId: "s", stock: 5 },
      { variantId: "m", stock: 3 },
    ]);
    const up = await adjust(sale.saleId, { delta: 4, variantId: "m" });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ stock: 12, remaining: 12 });
    expect(variantOf(up.body, "m")).toMatchObject({ remaining: 7 });
    expect(variantOf(up.body, "s")).toMatchObject({ remaining: 5 });
    const down = await adjust(sale.saleId, { delta: -5, variantId: "s" });
    expect(down.status).toBe(200);
    expect(down.body).toMatchObject({ stock: 7, remaining: 7 });
    expect(variantOf(down.body, "s")).toMatchObject({ remaining: 0, status: "sold_out" });
    expect(await figures(sale.saleId)).toEqual({
      redis: { stock: 7, remaining: 7, variants: { s: 0, m: 7 } },
      db: { stock: 7, variants: { s: 0, m: 7 }, recorded: -1 },
    });
    // the shopper's view agrees
    const read = await app.api.call<Body>("GET", `/api/sales/${sale.saleId}`);
    expect(variantOf(read.body, "m")).toMatchObject({ remaining: 7 });
  });

  it("refuses a drop's adjustment without a variant (400 INVALID_REQUEST) or with one it does not have (400 UNKNOWN_VARIANT)", async () => {
    const sale = await drop([
      { variantId: "red", stock: 2 },
      { variantId: "blue", stock: 2 },
    ]);
    const missing = await adjust(sale.saleId, { delta: 1 });
    expect([missing.status, missing.body.error?.code]).toEqual([400, "INVALID_REQUEST"]);
    expect(missing.body.error?.message).toMatch(/variantId.*red, blue/);
    const unknown = await adjust(sale.saleId, { delta: 1, variantId: "green" });
    expect([unknown.status, unknown.body.error?.code]).toEqual([400, "UNKNOWN_VARIANT"]);
    expect(unknown.body.error).toMatchObject({ variantId: "green" });
    const malformed = await adjust(sale.saleId, { delta: 1, variantId: "no spaces" });
    expect([malformed.status, malformed.body.error?.code]).toEqual([400, "INVALID_REQUEST"]);
    const notText = await adjust(sale.saleId, { delta: 1, variantId: 7 });
    expect([notText.status, notText.body.error?.code]).toEqual([400, "INVALID_REQUEST"]);
    // nothing changed anywhere
    expect(await figures(sale.saleId)).toEqual({
      redis: { stock: 4, remaining: 4, variants: { red: 2, blue: 2 } },
      db: { stock: 4, variants: { red: 2, blue: 2 }, recorded: 0 },
    });
  });

  it("never takes a variant below what is reserved of it, whatever the other variants have left", async () => {
    const sale = await drop([
      { variantId: "a", stock: 10 },
      { variantId: "b", stock: 3 },
    ]);
    await reserve(sale.saleId, "u1", [
      ["b", 2],
      ["a", 1],
    ]);
    // the sale has 10 left, variant b only 1
    const tooMuch = await adjust(sale.saleId, { delta: -2, variantId: "b" });
    expect([tooMuch.status, tooMuch.body.error?.code]).toEqual([409, "CONFLICT"]);
    expect(tooMuch.body.error).toMatchObject({ remaining: 1, variantId: "b" });
    const exact = await adjust(sale.saleId, { delta: -1, variantId: "b" });
    expect(exact.status).toBe(200);
    expect(variantOf(exact.body, "b")).toMatchObject({ remaining: 0 });
    const none = await adjust(sale.saleId, { delta: -1, variantId: "b" });
    expect([none.status, none.body.error?.code]).toEqual([409, "CONFLICT"]);
    expect(none.body.error).toMatchObject({ remaining: 0, variantId: "b" });
    expect(await figures(sale.saleId)).toEqual({
      redis: { stock: 12, remaining: 9, variants: { a: 9, b: 0 } },
      db: { stock: 12, variants: { a: 10, b: 2 }, recorded: -1 },
    });
  });

  it("a removal racing with buys of its variant never takes the variant below zero", async () => {
    const sale = await drop([
      { variantId: "hot", stock: 12 },
      { variantId: "cold", stock: 12 },
    ]);
    const buy = async (userId: string) =>
      app.api.call("POST", `/api/buy/${sale.productToken}`, {
        token: await shopperToken(userId),
        body: { variantId: "hot", quantity: 1 },
      });
    const results = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => buy(`race-${i}`)),
      adjust(sale.saleId, { delta: -6, variantId: "hot" }),
    ]);
    const bought = results.slice(0, 10).filter((r) => r.status === 202).length;
    const shrunk = results[10]?.status === 200 ? 6 : 0;
    expect(bought + shrunk).toBeLessThanOrEqual(12);
    const { redis } = await figures(sale.saleId);
    expect(redis.variants).toEqual({ hot: 12 - shrunk - bought, cold: 12 });
    expect(redis.remaining).toBe(24 - shrunk - bought);
    expect(redis.variants.hot).toBeGreaterThanOrEqual(0);
  });

  it("applies a retried adjustment once per Idempotency-Key, a failure between the stores included", async () => {
    const sale = await drop([
      { variantId: "x", stock: 4 },
      { variantId: "y", stock: 4 },
    ]);
    const first = await adjust(sale.saleId, { delta: 3, variantId: "y" }, "restock-y");
    const again = await adjust(sale.saleId, { delta: 3, variantId: "y" }, "restock-y");
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(variantOf(again.body, "y")).toMatchObject({ remaining: 7 });
    // the same key for another variant is another request: refused, like another delta
    const other = await adjust(sale.saleId, { delta: 3, variantId: "x" }, "restock-y");
    expect([other.status, other.body.error?.code]).toEqual([409, "CONFLICT"]);
    expect(other.body.error).toMatchObject({ appliedDelta: 3, variantId: "y" });
    // a day on, Redis's ledger has trimmed the entry: Postgres still knows the key's variant
    const keyed = await adjustmentIdForKey(sale.saleId, "restock-y");
    expect(await app.redis.hdel(saleKeys(sale.saleId).ledger, `a:${keyed}`)).toBe(1);
    const later = await adjust(sale.saleId, { delta: 3, variantId: "x" }, "restock-y");
    expect([later.status, later.body.error?.code]).toEqual([409, "CONFLICT"]);
    expect(later.body.error).toMatchObject({ appliedDelta: 3, variantId: "y" });
    // Redis applies it, Postgres refuses to record it: the retry completes it, once
    await failAdjustmentWrites(true);
    try {
      expect((await adjust(sale.saleId, { delta: -2, variantId: "x" }, "shrink-x")).status).toBe(503);
    } finally {
      await failAdjustmentWrites(false);
    }
    const retry = await adjust(sale.saleId, { delta: -2, variantId: "x" }, "shrink-x");
    expect(retry.status).toBe(200);
    expect(variantOf(retry.body, "x")).toMatchObject({ remaining: 2 });
    expect((await adjust(sale.saleId, { delta: -2, variantId: "x" }, "shrink-x")).status).toBe(200);
    expect(await figures(sale.saleId)).toEqual({
      redis: { stock: 9, remaining: 9, variants: { x: 2, y: 7 } },
      db: { stock: 9, variants: { x: 2, y: 7 }, recorded: 1 },
    });
  });

  it("records in Postgres, against its variant, an unkeyed adjustment half done in Redis (the reconciliation)", async () => {
    const sale = await drop([
      { variantId: "p", stock: 2 },
      { variantId: "q", stock: 2 },
    ]);
    await failAdjustmentWrites(true);
    try {
      expect((await adjust(sale.saleId, { delta: 5, variantId: "q" })).status).toBe(503);
    } finally {
      await failAdjustmentWrites(false);
    }
    // until then the figures say so, and which variant it touched
    const before = (await app.api.stats(sale.saleId)).body as { invariantBreaks: string[] };
    expect(before.invariantBreaks).toEqual([
      "variant q: stock 2 ≠ remaining 7 + live 0 + restoring 0",
      "the variants' stock adds up to 4 in Postgres, the sale's is 9 in Redis (an adjustment not recorded in Postgres yet?)",
    ]);
    const report = await app.api.admin("POST", `/sales/${sale.saleId}/reconcile`);
    expect(report.status).toBe(200);
    expect((report.body.recordedAdjustments as string[]).length).toBe(1);
    expect(report.body).toMatchObject({ variants: [], paused: false, stats: { invariantHolds: true } });
    expect(await figures(sale.saleId)).toEqual({
      redis: { stock: 9, remaining: 9, variants: { p: 2, q: 7 } },
      db: { stock: 9, variants: { p: 2, q: 7 }, recorded: 5 },
    });
  });

  it("names the variant in the ledger entry and the audit entry", async () => {
    const sale = await drop([
      { variantId: "v1", stock: 1 },
      { variantId: "v2", stock: 1 },
    ]);
    expect((await adjust(sale.saleId, { delta: 2, variantId: "v2" }, "audited")).status).toBe(200);
    const ledger = await app.redis.hgetall(saleKeys(sale.saleId).ledger);
    const entries = Object.entries(ledger).filter(([field]) => field.startsWith("a:"));
    expect(entries.map(([, json]) => JSON.parse(json))).toMatchObject([{ delta: 2, variantId: "v2" }]);
    const audit = await app.api.call<{ entries: { action: string; before?: unknown; after?: unknown }[] }>(
      "GET",
      `/api/admin/audit?saleId=${sale.saleId}`,
      { token: ADMIN_TOKEN },
    );
    const stock = audit.body.entries.filter((e) => e.action === "sale.stock");
    expect(stock).toHaveLength(1);
    expect(stock[0]).toMatchObject({
      before: { variantId: "v2", variantRemaining: 1, stock: 2, remaining: 2 },
      after: { variantId: "v2", variantRemaining: 3, stock: 4, remaining: 4, delta: 2 },
    });
  });
});

describe("stock adjustments of a sale of one variant", () => {
  it("takes the variant left out or named by its id, and keeps no units per variant", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    expect((await adjust(sale.saleId, { delta: 2 })).body).toMatchObject({ stock: 7, remaining: 7 });
    const named = await adjust(sale.saleId, { delta: -1, variantId: "default" });
    expect(named.status).toBe(200);
    expect(named.body).toMatchObject({
      stock: 6,
      remaining: 6,
      variants: [{ variantId: "default", remaining: 6 }],
    });
    const unknown = await adjust(sale.saleId, { delta: 1, variantId: "large" });
    expect([unknown.status, unknown.body.error?.code]).toEqual([400, "UNKNOWN_VARIANT"]);
    expect(await figures(sale.saleId)).toEqual({
      redis: { stock: 6, remaining: 6, variants: {} },
      db: { stock: 6, variants: { default: 6 }, recorded: 1 },
    });
    // a drop made of one variant is a sale of one: its id, not "default"
    const single = await drop([{ variantId: "only", stock: 3 }]);
    expect((await adjust(single.saleId, { delta: 1 })).body).toMatchObject({ stock: 4, remaining: 4 });
    expect((await adjust(single.saleId, { delta: 1, variantId: "only" })).body).toMatchObject({
      remaining: 5,
    });
    expect((await figures(single.saleId)).db.variants).toEqual({ only: 5 });
  });
});
