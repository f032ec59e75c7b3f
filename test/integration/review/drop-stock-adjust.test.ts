import { describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { shopperToken } from "../../support/shopper";
import { createDrop } from "../../support/variants";

/**
 * The contract's operator stock adjustment on a drop: `{"delta","variantId"}`, variantId required on a sale
 * of several, and the invariant per variant. Removing units of a drop must not let them be sold.
 */
// the sold-out memory is the process's own (another isolate, or a second later, has none): off here
const app = appForFile({
  vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", RATE_LIMIT_IP_PER_WINDOW: "100000", SOLD_OUT_CACHE_MS: "0" },
});

type Sale = {
  saleId: string;
  productToken: string;
  remaining: number;
  variants: { variantId: string; remaining: number }[];
};

async function drop(): Promise<Sale> {
  const variants = [
    { variantId: "S", name: "Small", priceCents: 1000, stock: 2 },
    { variantId: "M", name: "Medium", priceCents: 1200, stock: 5 },
    { variantId: "L", name: "Large", priceCents: 1500, stock: 1 },
  ];
  return (await createDrop(app, variants, { perUserLimit: 10 })) as unknown as Sale;
}

async function buy(token: string, userId: string, body: unknown) {
  return app.api.call("POST", `/api/buy/${token}`, { token: await shopperToken(userId), body });
}

describe("a stock adjustment on a drop", () => {
  it("units an operator removed from a drop are not sold afterwards (remaining never below 0)", async () => {
    const sale = await drop();
    // more than the variant holds: refused whole, nothing moves (the sale's total would allow it)
    const tooMuch = await app.api.admin("POST", `/sales/${sale.saleId}/stock`, { delta: -7, variantId: "M" });
    expect([tooMuch.status, (tooMuch.body as { error?: { code?: string } }).error?.code]).toEqual([
      409,
      "CONFLICT",
    ]);
    const cut = await app.api.admin("POST", `/sales/${sale.saleId}/stock`, { delta: -5, variantId: "M" });
    expect(cut.status).toBe(200);
    expect(cut.body).toMatchObject({ remaining: 3 });
    const answers: number[] = [];
    for (const [user, variantId] of [
      ["adj-1", "M"],
      ["adj-2", "M"],
      ["adj-3", "S"],
      ["adj-4", "L"],
    ] as const) {
      const r = await buy(sale.productToken, user, { variantId, quantity: 1 });
      answers.push(r.status);
    }
    expect(answers).toEqual([410, 410, 202, 202]);
    const left = Number(await app.redis.get(saleKeys(sale.saleId).stock));
    expect(left).toBe(1);
  });

  it("a delta naming a variant moves that variant's units, and they can be bought", async () => {
    const sale = await drop();
    const add = await app.api.admin("POST", `/sales/${sale.saleId}/stock`, { delta: 3, variantId: "L" });
    expect(add.status).toBe(200);
    const res = await buy(sale.productToken, "adj-add", { variantId: "L", quantity: 4 });
    expect(res.status).toBe(202);
  });

  it("a delta without variantId on a drop of several is refused (variantId required)", async () => {
    const sale = await drop();
    const res = await app.api.admin("POST", `/sales/${sale.saleId}/stock`, { delta: 3 });
    expect(res.status).toBe(400);
  });
});
