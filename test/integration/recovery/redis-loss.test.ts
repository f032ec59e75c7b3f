import { afterEach, describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { untilRebuilt } from "../../support/recovery";

const app = appForFile({
  // Redis paused, restarted or flushed here: the stack's one server, whatever the suite's layout
  oneServer: true,
  vars: {
    RATE_LIMIT_USER_PER_WINDOW: "1000",
    RECOVERY_QUIET_SECONDS: "5",
    OUTBOX_GRACE_SECONDS: "1",
    CATALOG_REFRESH_MS: "500",
  },
});
afterEach(() => {
  app?.stack.qstash.resume();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const code = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;

/** Waits until a rebuild has written the sale back into Redis (its meta has an epoch again). */
/** A buy refused because the sale is being restored: 503 UNAVAILABLE with Retry-After, not SALE_PAUSED. */
async function expectRestoring(res: { status: number; body: Record<string, unknown>; headers: Headers }) {
  expect([res.status, code(res.body)]).toEqual([503, "UNAVAILABLE"]);
  const retryAfter = Number(res.headers.get("Retry-After"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(5); // RECOVERY_QUIET_SECONDS here
}

/** Waits for the rebuilt sale's quiet period to end (the shopper view stops saying paused). */
async function settled(saleId: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const meta = await app.redis.hget(saleKeys(saleId).meta, "recoveringUntil");
    if (Number(meta ?? 0) < Date.now() - 200) return;
    await sleep(100);
  }
}

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

    // the sale is not sold from an empty Redis: 503 while nothing is there, and 503 while it settles
    const during = await buy("during", 1);
    expect([during.status, code(during.body)]).toEqual([503, "UNAVAILABLE"]);
    // recovery runs in the background of that request and in the cron
    await untilRebuilt(app, sale.saleId);
    await expectRestoring(await buy("during", 1));
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

  it("a restore is 503 with Retry-After, not SALE_PAUSED; an operator's pause stays one through and after it", async () => {
    const sale = await app.api.createSale({ stock: 10, perUserLimit: 2 });
    expect((await app.api.buy(sale.productToken, "q-before", 1)).status).toBe(202);
    await app.drain();
    await app.stack.redis.restart({ empty: true });
    await app.reconnect();
    const lost = await app.api.buy(sale.productToken, "q-other", 1);
    expect([lost.status, code(lost.body)]).toEqual([503, "UNAVAILABLE"]);
    await untilRebuilt(app, sale.saleId);
    // a keyed attempt during the restore is not remembered as that key's answer
    const keyed = await app.api.buy(sale.productToken, "q-keyed", 1, { "Idempotency-Key": "restore-1" });
    await expectRestoring(keyed);
    await expectRestoring(await app.api.buy(sale.productToken, "q-other", 1));

    // the operator pauses while the sale is being restored: that is the operator's pause
    expect((await app.api.admin("POST", `/sales/${sale.saleId}/pause`)).status).toBe(200);
    const paused = await app.api.buy(sale.productToken, "q-other", 1);
    expect([paused.status, code(paused.body)]).toEqual([409, "SALE_PAUSED"]);
    await settled(sale.saleId);
    const stillPaused = await app.api.buy(sale.productToken, "q-other", 1);
    expect([stillPaused.status, code(stillPaused.body)]).toEqual([409, "SALE_PAUSED"]);

    // an operator rebuild of a paused sale: paused during its quiet period and after it
    expect((await app.api.admin("POST", `/sales/${sale.saleId}/rebuild`)).status).toBe(200);
    const inQuiet = await app.api.buy(sale.productToken, "q-other", 1);
    expect([inQuiet.status, code(inQuiet.body)]).toEqual([409, "SALE_PAUSED"]);
    await settled(sale.saleId);
    const after = await app.api.buy(sale.productToken, "q-other", 1);
    expect([after.status, code(after.body)]).toEqual([409, "SALE_PAUSED"]);

    // resumed during a quiet period: 503 until it ends, then the keyed attempt buys
    expect((await app.api.admin("POST", `/sales/${sale.saleId}/rebuild`)).status).toBe(200);
    expect((await app.api.admin("POST", `/sales/${sale.saleId}/resume`)).status).toBe(200);
    await expectRestoring(await app.api.buy(sale.productToken, "q-other", 1));
    await settled(sale.saleId);
    const retried = await app.api.buy(sale.productToken, "q-keyed", 1, { "Idempotency-Key": "restore-1" });
    expect(retried.status).toBe(202);
    await app.drain();
    expect((await app.api.stats(sale.saleId)).body).toMatchObject({ remaining: 8, invariantHolds: true });
  });

  it("no live sale's token is answered 404 while the sales are restored, whatever the process loaded", async () => {
    const sales = [];
    for (let i = 0; i < 8; i++) sales.push(await app.api.createSale({ stock: 5, perUserLimit: 1 }));
    await app.stack.redis.restart({ empty: true });
    await app.reconnect();
    const seen = new Map<number, number>();
    let restoring = true;
    const probes = (async () => {
      // the last sales are rebuilt last: their tokens are the ones a partial catalog would not hold
      for (let round = 0; restoring; round++) {
        const replies = await Promise.all(
          sales.slice(-3).map((s, i) => app.api.buy(s.productToken, `probe-${round}-${i}`, 1)),
        );
        for (const r of replies) seen.set(r.status, (seen.get(r.status) ?? 0) + 1);
      }
    })();
    for (const s of sales) await untilRebuilt(app, s.saleId);
    restoring = false;
    await probes;
    expect(seen.get(404) ?? 0).toBe(0);
    expect(seen.get(503) ?? 0).toBeGreaterThan(0);
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
