import { describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { shopperToken } from "../../support/shopper";
import { createDrop } from "../../support/variants";

/* The contract: `…/stats` gains "variants":[{"variantId","stock","remaining","paidUnits","liveUnits"}]. */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", RATE_LIMIT_IP_PER_WINDOW: "100000" } });

describe("a drop's stats", () => {
  it("name each variant's stock, remaining and units", async () => {
    const sale = await createDrop(
      app,
      [
        { variantId: "S", name: "Small", priceCents: 1000, stock: 2 },
        { variantId: "M", name: "Medium", priceCents: 1200, stock: 5 },
      ],
      { perUserLimit: 5 },
    );
    const res = await app.api.call("POST", `/api/buy/${sale.productToken}`, {
      token: await shopperToken("stats-1"),
      body: { variantId: "M", quantity: 2 },
    });
    expect(res.status).toBe(202);
    await app.drain();
    const stats = (await app.api.stats(sale.saleId)).body as { variants?: unknown };
    expect(stats.variants).toEqual([
      expect.objectContaining({ variantId: "S", stock: 2, remaining: 2, paidUnits: 0, liveUnits: 0 }),
      expect.objectContaining({ variantId: "M", stock: 5, remaining: 3, paidUnits: 0, liveUnits: 2 }),
    ]);
  });
});
