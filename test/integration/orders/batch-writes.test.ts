import { describe, expect, it } from "vitest";
import { newOrderId, newSaleId } from "../../../src/ids";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { deliverJob } from "../../support/jobs";
import { reservedEntry } from "../../support/reserved-entry";

const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" } });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const reserved = (saleId: string, userId: string, quantity: number) =>
  reservedEntry(app, saleId, userId, quantity);

async function rows(saleId: string) {
  const { rows } = await app.db.query<{ id: string; user_id: string; status: string; written_at: Date }>(
    "select id, user_id, status, written_at from orders where sale_id = $1",
    [saleId],
  );
  return rows;
}

async function stats(saleId: string) {
  return (await app.api.stats(saleId)).body as Record<string, number | boolean>;
}

describe("one order never fails the others of its batch", () => {
  it("an order that takes its user over the limit is written with the rest, and the sale says so", async () => {
    const sale = await app.api.createSale({ stock: 10, perUserLimit: 2, paymentWindowSeconds: 600 });
    expect((await app.api.buy(sale.productToken, "late", 2)).status).toBe(202);
    await app.drain();
    // reservations acknowledged to two other shoppers, their write still to come
    const others = [await reserved(sale.saleId, "other-1", 1), await reserved(sale.saleId, "other-2", 2)];
    // an order of `late` that a lost Redis acknowledged before the rebuild; its write arrives only now,
    // after `late` bought again from the rebuilt Redis (so this Redis never counted it)
    const now = Date.now();
    const stale = {
      orderId: newOrderId(sale.saleId),
      saleId: sale.saleId,
      userId: "late",
      quantity: 1,
      createdAt: now - 5_000,
      expiresAt: now + 600_000,
      epoch: 1,
    };
    const job = { orders: [others[0], stale, others[1]] };
    const res = await deliverJob(app, "/api/jobs/order-write", job);
    expect(res.status).toBe(200);
    const written = await rows(sale.saleId);
    expect(written.map((r) => r.id)).toEqual(
      expect.arrayContaining([stale.orderId, ...others.map((o) => o.orderId)]),
    );
    expect(written).toHaveLength(4);
    expect(written.every((r) => r.status === "awaiting_payment")).toBe(true);
    // the other shoppers' outbox entries are acknowledged
    expect(await app.redis.zcard(saleKeys(sale.saleId).outbox)).toBe(0);
    // delivered again: a no-op
    expect((await deliverJob(app, "/api/jobs/order-write", job)).status).toBe(200);
    expect(await stats(sale.saleId)).toMatchObject({
      remaining: 10 - 2 - 3 - 1,
      ordersInDb: 4,
      usersOverLimit: 1,
      invariantHolds: false,
    });
    const { rows: held } = await app.db.query(
      "select units from holdings where sale_id = $1 and user_id = 'late'",
      [sale.saleId],
    );
    expect(held[0]?.units).toBe(3);
  });

  it("an order naming a sale that does not exist does not keep the others out", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    const good = await reserved(sale.saleId, "good", 1);
    const ghostSale = newSaleId();
    const ghost = { ...good, orderId: newOrderId(ghostSale), saleId: ghostSale, userId: "ghost" };
    const res = await deliverJob(app, "/api/jobs/order-write", { orders: [ghost, good] });
    expect(res.status).toBe(200);
    expect((await rows(sale.saleId)).map((r) => r.id)).toEqual([good.orderId]);
    expect(await app.redis.zcard(saleKeys(sale.saleId).outbox)).toBe(0);
    // its payment timeout too
    const timeout = await deliverJob(app, "/api/jobs/payment-timeout", {
      orders: [ghost, { ...good, expiresAt: Date.now() - 1 }],
    });
    expect(timeout.status).not.toBe(500);
    expect(timeout.status).not.toBe(400);
  });

  it("a user over the limit in Redis only breaks the invariant too", async () => {
    const sale = await app.api.createSale({ stock: 10, perUserLimit: 2 });
    expect((await app.api.buy(sale.productToken, "r-1", 2)).status).toBe(202);
    await app.drain();
    expect(await stats(sale.saleId)).toMatchObject({ usersOverLimit: 0, invariantHolds: true });
    await app.redis.hincrby(saleKeys(sale.saleId).holdings, "r-2", 3);
    expect(await stats(sale.saleId)).toMatchObject({ usersOverLimit: 1, invariantHolds: false });
  });
});

describe("payment timeouts of a mixed batch", () => {
  it("an order of a 2 s sale expires within its window plus 30 s though a 1-day sale shared its batch", async () => {
    const short = await app.api.createSale({ stock: 50, paymentWindowSeconds: 2 });
    const long = await app.api.createSale({ stock: 50, paymentWindowSeconds: 86_400 });
    // bought in the same instant: until both land in the same batch (one write statement)
    let pair: { shortId: string; expiresAt: number } | null = null;
    for (let attempt = 0; attempt < 8 && !pair; attempt++) {
      const [a, b] = await Promise.all([
        app.api.buy(short.productToken, `mix-a${attempt}`, 1),
        app.api.buy(long.productToken, `mix-b${attempt}`, 1),
      ]);
      expect([a.status, b.status]).toEqual([202, 202]);
      await app.drain();
      const { rows } = await app.db.query<{ written_at: Date }>(
        "select written_at from orders where id = any($1)",
        [[a.body.orderId, b.body.orderId]],
      );
      const same = rows.length === 2 && rows[0]?.written_at.getTime() === rows[1]?.written_at.getTime();
      if (same) pair = { shortId: String(a.body.orderId), expiresAt: Date.parse(String(a.body.expiresAt)) };
    }
    expect(pair, "the two buys never shared a batch").not.toBeNull();
    const { shortId, expiresAt } = pair as { shortId: string; expiresAt: number };
    let status = "";
    while (Date.now() < expiresAt + 30_000) {
      const { rows } = await app.db.query<{ status: string }>("select status from orders where id = $1", [
        shortId,
      ]);
      status = String(rows[0]?.status);
      if (status === "expired") break;
      await sleep(250);
    }
    expect(status).toBe("expired");
  }, 60_000);
});
