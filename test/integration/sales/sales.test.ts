import { describe, expect, it } from "vitest";
import { catalogKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { INVALID_SALE_DEFINITION } from "../../support/sale-definitions";
import { ADMIN_TOKEN } from "../../support/shopper";

const app = appForFile();

const code = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;

/** The operator asks for a sale of `productId` again (a retry, or a second sale of the same product). */
function createAgain(productId: string, stock: number) {
  return app.api.admin("POST", "/sales", {
    productId,
    name: "Again",
    priceCents: 1,
    stock,
    perUserLimit: 1,
    startsAt: new Date().toISOString(),
    endsAt: new Date(Date.now() + 60_000).toISOString(),
    paymentWindowSeconds: 60,
  });
}

describe("shopper sale routes", () => {
  it("lists live and upcoming sales; the product token appears only once a sale is live", async () => {
    const now = Date.now();
    const live = await app.api.createSale({ name: "Live one" });
    const upcoming = await app.api.createSale({
      name: "Later one",
      startsAt: new Date(now + 3600_000).toISOString(),
      endsAt: new Date(now + 7200_000).toISOString(),
    });
    const ended = await app.api.createSale({
      startsAt: new Date(now - 7200_000).toISOString(),
      endsAt: new Date(now - 3600_000).toISOString(),
    });
    await new Promise((r) => setTimeout(r, 600));
    const list = await app.api.call<{ sales: Record<string, unknown>[]; serverTime: string }>(
      "GET",
      "/api/sales",
    );
    expect(list.status).toBe(200);
    const byId = new Map(list.body.sales.map((s) => [s.saleId, s]));
    expect(byId.get(live.saleId)).toMatchObject({
      status: "live",
      productToken: live.productToken,
      remaining: 10,
      perUserLimit: 2,
    });
    expect(byId.get(upcoming.saleId)).toMatchObject({ status: "upcoming" });
    expect(byId.get(upcoming.saleId)).not.toHaveProperty("productToken");
    expect(byId.has(ended.saleId)).toBe(false);
    const one = await app.api.call("GET", `/api/sales/${upcoming.saleId}`);
    expect(one.body).toMatchObject({
      saleId: upcoming.saleId,
      name: "Later one",
      status: "upcoming",
      priceCents: 4900,
    });
    expect(one.body).not.toHaveProperty("productToken");
    expect(Math.abs(Date.parse(String(one.body.serverTime)) - Date.now())).toBeLessThan(5000);
    const missing = await app.api.call("GET", "/api/sales/snotasale000");
    expect([missing.status, code(missing.body)]).toEqual([404, "UNKNOWN_SALE"]);
  });
});

describe("operator routes", () => {
  it("refuse requests without the operator token", async () => {
    for (const token of [undefined, "wrong-token", `${ADMIN_TOKEN}x`]) {
      const res = await app.api.call("POST", "/api/admin/sales", { ...(token ? { token } : {}), body: {} });
      expect([res.status, code(res.body)]).toEqual([401, "UNAUTHENTICATED"]);
    }
    const shopper = await app.api.call("GET", "/api/admin/sales", { token: "eyJhbGciOiJIUzI1NiJ9.e30.x" });
    expect(shopper.status).toBe(401);
  });

  it("validate a sale definition field by field", async () => {
    const res = await app.api.admin("POST", "/sales", INVALID_SALE_DEFINITION);
    expect([res.status, code(res.body)]).toEqual([400, "INVALID_REQUEST"]);
    const fields = (res.body.error as { fields: Record<string, string> }).fields;
    expect(Object.keys(fields).sort()).toEqual(
      ["paymentWindowSeconds", "perUserLimit", "priceCents", "productId", "startsAt", "stock"].sort(),
    );
    const backwards = await app.api.admin("POST", "/sales", {
      productId: "p-backwards",
      name: "Backwards",
      priceCents: 1,
      stock: 1,
      perUserLimit: 1,
      startsAt: "2030-01-02T00:00:00Z",
      endsAt: "2030-01-01T00:00:00Z",
      paymentWindowSeconds: 60,
    });
    expect((backwards.body.error as { fields: Record<string, string> }).fields).toHaveProperty("endsAt");
  });

  it("refuse a second sale for the same product", async () => {
    const sale = await app.api.createSale({ productId: "sku-unique-1" });
    const again = await createAgain("sku-unique-1", 1);
    expect([again.status, code(again.body)]).toEqual([409, "CONFLICT"]);
    expect((again.body.error as { saleId: string }).saleId).toBe(sale.saleId);
  });

  it("complete a creation cut off before its token reached the catalog when the operator asks again", async () => {
    const sale = await app.api.createSale({ productId: "sku-cut-off", stock: 4 });
    // the creation's last step lost: the token not in the catalog's index (the Bloom filter keeps it)
    await app.redis.hdel(catalogKeys.tokens, sale.productToken);
    const lost = await app.api.buy(sale.productToken, "cut-off-early", 1);
    expect([lost.status, code(lost.body)]).toEqual([404, "UNKNOWN_PRODUCT"]);
    const again = await createAgain("sku-cut-off", 4);
    expect([again.status, code(again.body)]).toEqual([409, "CONFLICT"]);
    expect((again.body.error as { saleId: string }).saleId).toBe(sale.saleId);
    const deadline = Date.now() + 10_000;
    let bought = await app.api.buy(sale.productToken, "cut-off-later", 1);
    while (bought.status !== 202 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250)); // each process's catalog reading refreshes by its version
      bought = await app.api.buy(sale.productToken, "cut-off-later", 1);
    }
    expect(bought.status).toBe(202);
  });

  it("adjust stock while live, never below what is reserved", async () => {
    const sale = await app.api.createSale({ stock: 3, perUserLimit: 3 });
    expect((await app.api.buy(sale.productToken, "adj", 3)).status).toBe(202);
    const more = await app.api.admin("POST", `/sales/${sale.saleId}/stock`, { delta: 5 });
    expect(more.body).toMatchObject({ stock: 8, remaining: 5 });
    const tooMuch = await app.api.admin("POST", `/sales/${sale.saleId}/stock`, { delta: -6 });
    expect([tooMuch.status, code(tooMuch.body)]).toEqual([409, "CONFLICT"]);
    const less = await app.api.admin("POST", `/sales/${sale.saleId}/stock`, { delta: -5 });
    expect(less.body).toMatchObject({ stock: 3, remaining: 0, status: "sold_out" });
    for (const delta of [0, 1.5, "2", null]) {
      const bad = await app.api.admin("POST", `/sales/${sale.saleId}/stock`, { delta });
      expect([bad.status, code(bad.body)]).toEqual([400, "INVALID_REQUEST"]);
    }
    await app.drain();
    expect((await app.api.stats(sale.saleId)).body).toMatchObject({
      stock: 3,
      remaining: 0,
      invariantHolds: true,
    });
    const { rows } = await app.db.query(
      "select initial_stock + stock_adjustments as total from sales where id = $1",
      [sale.saleId],
    );
    expect(rows[0].total).toBe(3);
  });

  it("answer 404 UNKNOWN_SALE for a sale that does not exist", async () => {
    for (const path of ["/stats", "/pause", "/reconcile"]) {
      const res = await app.api.admin(path === "/stats" ? "GET" : "POST", `/sales/snotasale000${path}`);
      expect([res.status, code(res.body)]).toEqual([404, "UNKNOWN_SALE"]);
    }
  });
});

describe("the pages and headers", () => {
  it("answers unknown API routes with the contract's error body and sets security headers", async () => {
    const res = await app.api.call("GET", "/api/nope");
    expect([res.status, code(res.body)]).toEqual([404, "NOT_FOUND"]);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });
});
