import { describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { ADMIN_TOKEN } from "../../support/shopper";

/** Operator stock adjustments racing with each other and with buys. */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" } });

describe("stock adjustments at the same moment", () => {
  const adjust = (saleId: string, delta: number, key: string) =>
    app.api.call("POST", `/api/admin/sales/${saleId}/stock`, {
      token: ADMIN_TOKEN,
      body: { delta },
      headers: { "Idempotency-Key": key },
    });

  it("the same key sent many times at once is applied once in both stores", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    const answers = await Promise.all(Array.from({ length: 8 }, () => adjust(sale.saleId, 3, "twice")));
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(await app.redis.hget(saleKeys(sale.saleId).meta, "stock")).toBe("8");
    expect(await app.redis.get(saleKeys(sale.saleId).stock)).toBe("8");
    const { rows } = await app.db.query<{ n: number; adj: number }>(
      `select (select count(*)::int from stock_adjustments where sale_id = $1) as n,
              (select stock_adjustments from sales where id = $1) as adj`,
      [sale.saleId],
    );
    expect(rows[0]).toEqual({ n: 1, adj: 3 });
  });

  it("a negative delta racing with buys never takes remaining below zero", async () => {
    const sale = await app.api.createSale({ stock: 20, perUserLimit: 1 });
    const results = await Promise.all([
      ...Array.from({ length: 15 }, (_, i) => app.api.buy(sale.productToken, `neg-${i}`, 1)),
      adjust(sale.saleId, -10, "shrink"),
    ]);
    const bought = results.slice(0, 15).filter((r) => r.status === 202).length;
    const shrunk = results[15]?.status === 200 ? 10 : 0;
    expect(Number(await app.redis.get(saleKeys(sale.saleId).stock))).toBe(20 - shrunk - bought);
    expect(Number(await app.redis.get(saleKeys(sale.saleId).stock))).toBeGreaterThanOrEqual(0);
    await app.drain();
    expect((await app.api.stats(sale.saleId)).body.invariantHolds).toBe(true);
  });
});
