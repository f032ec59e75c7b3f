import { describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { createDrop } from "../../support/variants";

/**
 * The contract's "Variants and carts" through the real stack (Redis, Postgres, the QStash stand-in):
 * a drop of several variants, one limit across them, a cart reserved all or none.
 */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", RATE_LIMIT_IP_PER_WINDOW: "100000" } });

type Variant = { variantId: string; name: string; priceCents: number; remaining: number; status: string };
type Sale = { saleId: string; productToken: string; remaining: number; status: string; variants: Variant[] };
type Item = { variantId: string; name: string; quantity: number; priceCents: number };
type ErrorBody = {
  error: { code: string; remaining?: number; variants?: { variantId: string; remaining: number }[] };
};

const code = (body: unknown) => (body as ErrorBody).error?.code;

/** A live drop: S (2 units, 10.00), M (5, 12.00), L (1, 15.00, one per shopper); 3 units per shopper in all. */
async function drop(overrides: Record<string, unknown> = {}): Promise<Sale> {
  const variants = [
    { variantId: "S", name: "Small", priceCents: 1000, stock: 2 },
    { variantId: "M", name: "Medium", priceCents: 1200, stock: 5 },
    { variantId: "L", name: "Large", priceCents: 1500, stock: 1, perUserLimit: 1 },
  ];
  return (await createDrop(app, variants, { perUserLimit: 3, ...overrides })) as unknown as Sale;
}

async function buy(token: string, userId: string, body: unknown, headers: Record<string, string> = {}) {
  const { shopperToken } = await import("../../support/shopper");
  return app.api.call("POST", `/api/buy/${token}`, { token: await shopperToken(userId), body, headers });
}

async function saleNow(saleId: string): Promise<Sale> {
  return (await app.api.call("GET", `/api/sales/${saleId}`)).body as unknown as Sale;
}

const remainingOf = (sale: Sale) => Object.fromEntries(sale.variants.map((v) => [v.variantId, v.remaining]));

describe("a drop of variants", () => {
  it("shows its variants, their sum as the sale's remaining and the lowest price", async () => {
    const sale = await drop();
    expect(sale.remaining).toBe(8);
    expect(sale.variants.map((v) => [v.variantId, v.name, v.priceCents, v.remaining, v.status])).toEqual([
      ["S", "Small", 1000, 2, "live"],
      ["M", "Medium", 1200, 5, "live"],
      ["L", "Large", 1500, 1, "live"],
    ]);
    expect((sale as unknown as { priceCents: number }).priceCents).toBe(1000);
  });

  it("reserves a cart of two lines in one buy, with its lines and amount on the order", async () => {
    const sale = await drop();
    const res = await buy(sale.productToken, "cart-1", {
      items: [
        { variantId: "S", quantity: 1 },
        { variantId: "M", quantity: 2 },
      ],
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: "queued", quantity: 3 });
    const expected: Item[] = [
      { variantId: "S", name: "Small", quantity: 1, priceCents: 1000 },
      { variantId: "M", name: "Medium", quantity: 2, priceCents: 1200 },
    ];
    const orderId = String(res.body.orderId);
    const queued = await app.api.order(orderId, "cart-1");
    expect(queued.body).toMatchObject({ quantity: 3, items: expected, amountCents: 3400 });
    await app.drain();
    const written = await app.api.order(orderId, "cart-1");
    expect(written.body).toMatchObject({
      status: "awaiting_payment",
      quantity: 3,
      items: expected,
      amountCents: 3400,
    });
    const { rows } = await app.db.query(
      "select items, amount_cents::int as amount_cents from orders where id = $1",
      [orderId],
    );
    expect(rows[0]).toEqual({ items: expected, amount_cents: 3400 });
    expect(remainingOf(await saleNow(sale.saleId))).toEqual({ S: 1, M: 3, L: 1 });
  });

  it("counts one limit across the variants, and a variant's own cap under it", async () => {
    const sale = await drop();
    expect((await buy(sale.productToken, "lim-1", { variantId: "M", quantity: 2 })).status).toBe(202);
    const over = await buy(sale.productToken, "lim-1", {
      items: [
        { variantId: "S", quantity: 1 },
        { variantId: "L", quantity: 1 },
      ],
    });
    expect([over.status, code(over.body)]).toEqual([409, "LIMIT_EXCEEDED"]);
    expect((await buy(sale.productToken, "lim-1", { variantId: "S", quantity: 1 })).status).toBe(202);
    const full = await buy(sale.productToken, "lim-1", { variantId: "L", quantity: 1 });
    expect([full.status, code(full.body)]).toEqual([409, "ALREADY_PURCHASED"]);
    const capped = await buy(sale.productToken, "lim-2", { variantId: "L", quantity: 2 });
    expect([capped.status, code(capped.body)]).toEqual([409, "LIMIT_EXCEEDED"]);
    expect(remainingOf(await saleNow(sale.saleId))).toEqual({ S: 1, M: 3, L: 1 });
  });

  it("reserves nothing when one line is short, and names every short line", async () => {
    const sale = await drop();
    const res = await buy(sale.productToken, "short-1", {
      items: [
        { variantId: "S", quantity: 3 },
        { variantId: "M", quantity: 1 },
      ],
    });
    // 3 units of S pass the sale's limit of 3 only with M: the limit comes first
    expect([res.status, code(res.body)]).toEqual([409, "LIMIT_EXCEEDED"]);
    const other = await drop({ perUserLimit: 10 });
    const short = await buy(other.productToken, "short-2", {
      items: [
        { variantId: "S", quantity: 3 },
        { variantId: "M", quantity: 1 },
      ],
    });
    expect([short.status, code(short.body)]).toEqual([409, "INSUFFICIENT_STOCK"]);
    expect((short.body as ErrorBody).error.variants).toEqual([{ variantId: "S", remaining: 2 }]);
    expect(remainingOf(await saleNow(other.saleId))).toEqual({ S: 2, M: 5, L: 1 });
  });

  it("greys a variant that is gone while the others sell; SOLD_OUT only when every line's variant is gone", async () => {
    const sale = await drop();
    expect((await buy(sale.productToken, "gone-1", { variantId: "L", quantity: 1 })).status).toBe(202);
    const after = await saleNow(sale.saleId);
    expect(after.variants.find((v) => v.variantId === "L")).toMatchObject({
      remaining: 0,
      status: "sold_out",
    });
    expect(after.status).toBe("live");
    const gone = await buy(sale.productToken, "gone-2", { variantId: "L", quantity: 1 });
    expect([gone.status, code(gone.body)]).toEqual([410, "SOLD_OUT"]);
    const mixed = await buy(sale.productToken, "gone-2", {
      items: [
        { variantId: "L", quantity: 1 },
        { variantId: "M", quantity: 1 },
      ],
    });
    expect([mixed.status, code(mixed.body)]).toEqual([409, "INSUFFICIENT_STOCK"]);
    expect((mixed.body as ErrorBody).error.variants).toEqual([{ variantId: "L", remaining: 0 }]);
    expect((await buy(sale.productToken, "gone-2", { variantId: "M", quantity: 1 })).status).toBe(202);
  });

  it("refuses a variant it does not have, a bare quantity, a variant twice and an 11th line, reserving nothing", async () => {
    const sale = await drop();
    const unknown = await buy(sale.productToken, "bad-1", { variantId: "XL", quantity: 1 });
    expect([unknown.status, code(unknown.body)]).toEqual([400, "UNKNOWN_VARIANT"]);
    const bare = await buy(sale.productToken, "bad-1", { quantity: 1 });
    expect([bare.status, code(bare.body)]).toEqual([400, "INVALID_REQUEST"]);
    const empty = await buy(sale.productToken, "bad-1", undefined);
    expect([empty.status, code(empty.body)]).toEqual([400, "INVALID_REQUEST"]);
    const twice = await buy(sale.productToken, "bad-1", {
      items: [
        { variantId: "S", quantity: 1 },
        { variantId: "S", quantity: 1 },
      ],
    });
    expect([twice.status, code(twice.body)]).toEqual([400, "INVALID_REQUEST"]);
    const lines = Array.from({ length: 11 }, (_, i) => ({ variantId: `v${i}`, quantity: 1 }));
    const eleven = await buy(sale.productToken, "bad-1", { items: lines });
    expect([eleven.status, code(eleven.body)]).toEqual([400, "INVALID_REQUEST"]);
    const zero = await buy(sale.productToken, "bad-1", { items: [{ variantId: "S", quantity: 0 }] });
    expect([zero.status, code(zero.body)]).toEqual([400, "INVALID_REQUEST"]);
    expect(remainingOf(await saleNow(sale.saleId))).toEqual({ S: 2, M: 5, L: 1 });
  });

  it("gives a keyed cart's first answer again and reserves once", async () => {
    const sale = await drop();
    const body = {
      items: [
        { variantId: "S", quantity: 1 },
        { variantId: "L", quantity: 1 },
      ],
    };
    const first = await buy(sale.productToken, "key-1", body, { "Idempotency-Key": "cart-once" });
    const again = await buy(sale.productToken, "key-1", body, { "Idempotency-Key": "cart-once" });
    expect(first.status).toBe(202);
    expect(again.body.orderId).toBe(first.body.orderId);
    expect(remainingOf(await saleNow(sale.saleId))).toEqual({ S: 1, M: 5, L: 0 });
  });

  it("a shopper with one unit per drop holds one size whatever arrives at once", async () => {
    const sale = await drop({ perUserLimit: 1 });
    const sizes = ["S", "M", "L", "S", "M", "L", "M", "S"];
    const answers = await Promise.all(
      sizes.map((variantId) => buy(sale.productToken, "racer", { variantId, quantity: 1 })),
    );
    expect(answers.filter((a) => a.status === 202)).toHaveLength(1);
    expect(answers.every((a) => a.status === 202 || code(a.body) === "ALREADY_PURCHASED")).toBe(true);
    const left = remainingOf(await saleNow(sale.saleId));
    expect(Object.values(left).reduce((a, b) => a + b, 0)).toBe(7);
  });

  it("makes a sale without variants a sale of one, default, with its order's one line", async () => {
    const sale = (await app.api.createSale({ stock: 4, priceCents: 2500, name: "Plain" })) as unknown as Sale;
    expect(sale.variants).toEqual([
      { variantId: "default", name: "Plain", priceCents: 2500, remaining: 4, status: "live" },
    ]);
    const res = await app.api.buy(sale.productToken, "plain-1", 2);
    expect(res.status).toBe(202);
    const named = await buy(sale.productToken, "plain-2", { variantId: "default", quantity: 1 });
    expect(named.status).toBe(202);
    await app.drain();
    const order = await app.api.order(String(res.body.orderId), "plain-1");
    expect(order.body).toMatchObject({
      items: [{ variantId: "default", name: "Plain", quantity: 2, priceCents: 2500 }],
      amountCents: 5000,
    });
  });
});
