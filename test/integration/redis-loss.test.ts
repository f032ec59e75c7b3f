import { afterEach, describe, expect, it } from "vitest";
import { saleKeys } from "../../src/sale/keys";
import { appForFile } from "../support/app-per-file";

const app = appForFile({
  vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", RECOVERY_QUIET_SECONDS: "5", OUTBOX_GRACE_SECONDS: "1" },
});
afterEach(() => {
  app?.stack.qstash.resume();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const code = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;

describe("Redis restarted empty mid-sale (the failover case)", () => {
  it("stops selling, rebuilds from Postgres plus the jobs in flight, resumes, and never sells a unit twice", async () => {
    const stock = 40;
    const sale = await app.api.createSale({ stock, perUserLimit: 2, paymentWindowSeconds: 600 });
    const acknowledged = new Map<string, { userId: string; quantity: number }>();
    const buy = async (userId: string, quantity: number) => {
      const res = await app.api.buy(sale.productToken, userId, quantity);
      if (res.status === 202) acknowledged.set(String(res.body.orderId), { userId, quantity });
      return res;
    };
    for (let i = 0; i < 10; i++) expect((await buy(`before-${i}`, 2)).status).toBe(202);
    await app.drain();
    const paidOrder = [...acknowledged.entries()][0] as [string, { userId: string }];
    expect((await app.api.order(paidOrder[0], paidOrder[1].userId, "pay")).status).toBe(200);

    // reservations acknowledged while their order writes are still in flight
    app.stack.qstash.pause();
    for (let i = 0; i < 5; i++) expect((await buy(`inflight-${i}`, 2)).status).toBe(202);

    await app.stack.redis.restart({ empty: true });
    await app.reconnect();

    // the sale is not sold from an empty Redis: 503 while nothing is there, then paused while it settles
    const during = await buy("during", 1);
    expect([503, 409]).toContain(during.status);
    expect(["UNAVAILABLE", "SALE_PAUSED"]).toContain(code(during.body));
    // recovery runs in the background of that request and in the cron; until it is in Redis: 503
    await app.worker.scheduled();
    let recovering = await buy("during", 1);
    for (let i = 0; i < 50 && recovering.status === 503; i++) {
      await sleep(100);
      recovering = await buy("during", 1);
    }
    expect([recovering.status, code(recovering.body)]).toEqual([409, "SALE_PAUSED"]);
    expect(await app.redis.get(saleKeys(sale.saleId).stock)).toBe(String(stock - 20));

    // the writes in flight land and are counted in the rebuilt Redis
    app.stack.qstash.resume();
    await app.drain();
    expect(await app.redis.get(saleKeys(sale.saleId).stock)).toBe(String(stock - 30));
    const deadline = Date.now() + 20_000;
    while (
      (await app.api.call("GET", `/api/sales/${sale.saleId}`)).body.status === "paused" &&
      Date.now() < deadline
    ) {
      await sleep(100);
    }

    // selling resumes and stops at exactly the stock
    const after = await Promise.all(Array.from({ length: 12 }, (_, i) => buy(`after-${i}`, 2)));
    expect(after.filter((r) => r.status === 202)).toHaveLength(5);
    expect(after.filter((r) => r.status === 410 || code(r.body) === "INSUFFICIENT_STOCK")).toHaveLength(7);
    await app.drain();

    const stats = (await app.api.stats(sale.saleId)).body;
    expect(stats).toMatchObject({ stock, remaining: 0, queued: 0, invariantHolds: true, usersOverLimit: 0 });
    const { rows } = await app.db.query<{ id: string; user_id: string; quantity: number }>(
      "select id, user_id, quantity from orders where sale_id = $1 and status in ('awaiting_payment', 'paid')",
      [sale.saleId],
    );
    expect(rows.reduce((s, r) => s + r.quantity, 0)).toBe(stock);
    expect(rows).toHaveLength(acknowledged.size);
    for (const row of rows)
      expect(acknowledged.get(row.id)).toEqual({ userId: row.user_id, quantity: row.quantity });
    const report = await app.api.admin("POST", `/sales/${sale.saleId}/reconcile`);
    expect(report.body).toMatchObject({
      drift: 0,
      mismatched: [],
      ordersWithoutReservation: [],
      paused: false,
    });
  });

  it("a replica that was behind takes over: the order writes count the lost reservations again, once", async () => {
    const stock = 10;
    const sale = await app.api.createSale({ stock, perUserLimit: 2, paymentWindowSeconds: 600 });
    for (const user of ["r1", "r2"]) expect((await app.api.buy(sale.productToken, user, 2)).status).toBe(202);
    await app.drain();
    await app.redis.save();

    // acknowledged after the replica's last sync: the new primary has never seen these
    app.stack.qstash.pause();
    for (const user of ["r3", "r4"]) expect((await app.api.buy(sale.productToken, user, 2)).status).toBe(202);
    await app.stack.redis.kill();
    await app.stack.redis.restart({ empty: false });
    await app.reconnect();
    expect(await app.redis.get(saleKeys(sale.saleId).stock)).toBe(String(stock - 4));

    app.stack.qstash.resume();
    await app.drain();
    expect(await app.redis.get(saleKeys(sale.saleId).stock)).toBe(String(stock - 8));
    // a second delivery of the same writes changes nothing
    const replies = await Promise.all(["r5", "r6", "r7"].map((u) => app.api.buy(sale.productToken, u, 2)));
    expect(replies.filter((r) => r.status === 202)).toHaveLength(1);
    await app.drain();
    expect((await app.api.stats(sale.saleId)).body).toMatchObject({
      stock,
      remaining: 0,
      invariantHolds: true,
    });
  });
});
