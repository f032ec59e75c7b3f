import { describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { deliverJob } from "../../support/jobs";
import { reservedEntry } from "../../support/reserved-entry";

/** Order-write batches that are acknowledged in part, or carry an entry left out as malformed. */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" } });

const reserved = (saleId: string, userId: string, quantity: number) =>
  reservedEntry(app, saleId, userId, quantity);

async function holdings(saleId: string) {
  const { rows } = await app.db.query<{ user_id: string; units: number }>(
    "select user_id, units from holdings where sale_id = $1 order by user_id",
    [saleId],
  );
  return Object.fromEntries(rows.map((r) => [r.user_id, r.units]));
}

describe("a batch acknowledged in part", () => {
  it("is retried whole without counting the acknowledged sale's orders twice", async () => {
    const a = await app.api.createSale({ stock: 10, perUserLimit: 2 });
    const b = await app.api.createSale({ stock: 10, perUserLimit: 2 });
    const a1 = await reserved(a.saleId, "pa-1", 2);
    const a2 = await reserved(a.saleId, "pa-2", 1);
    const b1 = await reserved(b.saleId, "pb-1", 2);
    const bMeta = saleKeys(b.saleId).meta;
    // b's Redis is of another generation than Postgres says (a rebuild under way)
    await app.redis.hset(bMeta, "epoch", "9");
    const job = { orders: [a1, b1, a2] };
    for (let delivery = 0; delivery < 2; delivery++) {
      expect((await deliverJob(app, "/api/jobs/order-write", job)).status).toBe(503);
      expect(await app.redis.zrange(saleKeys(a.saleId).outbox, "0", "-1")).toEqual([]);
      expect(await app.redis.zrange(saleKeys(b.saleId).outbox, "0", "-1")).toEqual([b1.orderId]);
      expect(await app.redis.get(saleKeys(a.saleId).stock)).toBe("7");
      expect(await holdings(a.saleId)).toEqual({ "pa-1": 2, "pa-2": 1 });
    }
    await app.redis.hset(bMeta, "epoch", "1");
    expect((await deliverJob(app, "/api/jobs/order-write", job)).status).toBe(200);
    expect(await app.redis.zcard(saleKeys(b.saleId).outbox)).toBe(0);
    expect(await app.redis.get(saleKeys(b.saleId).stock)).toBe("8");
    expect(await app.redis.get(saleKeys(a.saleId).stock)).toBe("7");
    expect(await holdings(b.saleId)).toEqual({ "pb-1": 2 });
    expect(await holdings(a.saleId)).toEqual({ "pa-1": 2, "pa-2": 1 });
    for (const sale of [a, b]) {
      const stats = (await app.api.stats(sale.saleId)).body;
      expect(stats, JSON.stringify(stats)).toMatchObject({ invariantHolds: true, queued: 0 });
    }
  });

  it("an entry left out as malformed keeps its order in the outbox, even beside a valid one", async () => {
    const sale = await app.api.createSale({ stock: 10, perUserLimit: 2 });
    const good = await reserved(sale.saleId, "mal-1", 1);
    const real = await reserved(sale.saleId, "mal-2", 1);
    const broken = { ...real, quantity: 0 };
    expect((await deliverJob(app, "/api/jobs/order-write", { orders: [good, broken] })).status).toBe(200);
    expect(await app.redis.zrange(saleKeys(sale.saleId).outbox, "0", "-1")).toEqual([real.orderId]);
    expect(await app.redis.hexists(saleKeys(sale.saleId).orders, real.orderId)).toBe(1);
  });
});
