import { describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { deliverJob } from "../../support/jobs";
import { reservedEntry } from "../../support/reserved-entry";

/*
 * A price times a quantity past int4: refused when the sale is created (its price × limit must fit), and
 * an order past it all the same (a late write over the limit) is written with its bigint amount, never
 * failing the write of the other orders of its batch.
 */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", RATE_LIMIT_IP_PER_WINDOW: "100000" } });

async function rows(saleId: string) {
  const { rows } = await app.db.query<{ id: string; status: string }>(
    "select id, status from orders where sale_id = $1",
    [saleId],
  );
  return rows;
}

describe("an order whose amount passes int4", () => {
  it("a drop whose dearest variant times the limit passes int4 is refused at creation", async () => {
    const res = await app.api.admin("POST", "/sales", {
      productId: `gold-${Date.now()}`,
      name: "Gold",
      perUserLimit: 5,
      startsAt: new Date(Date.now() - 1000).toISOString(),
      endsAt: new Date(Date.now() + 3_600_000).toISOString(),
      paymentWindowSeconds: 600,
      variants: [
        { variantId: "gold", name: "Gold", priceCents: 1_000_000_000, stock: 5 },
        { variantId: "tin", name: "Tin", priceCents: 100, stock: 5 },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: { code: "INVALID_REQUEST", fields: { perUserLimit: expect.any(String) } },
    });
  });

  it("does not keep another shopper's order of another sale out of the same batch", async () => {
    // an order of an amount past int4 (3 units where the sale allows 1: a late write after a Redis loss)
    const dear = await app.api.createSale({ stock: 5, perUserLimit: 1, priceCents: 1_000_000_000 });
    const cheap = await app.api.createSale({ stock: 5, perUserLimit: 5, priceCents: 500 });
    const big = { ...(await reservedEntry(app, dear.saleId, "big", 1)), quantity: 3 };
    const good = await reservedEntry(app, cheap.saleId, "good", 1);
    const res = await deliverJob(app, "/api/jobs/order-write", { orders: [big, good] });
    expect((await rows(cheap.saleId)).map((r) => r.id)).toEqual([good.orderId]);
    expect(await app.redis.zcard(saleKeys(cheap.saleId).outbox)).toBe(0);
    expect(res.status).toBe(200);
  });
});
