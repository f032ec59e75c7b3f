import { describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { deliverJob } from "../../support/jobs";

const app = appForFile({
  vars: {
    RATE_LIMIT_USER_PER_WINDOW: "1000",
    RATE_LIMIT_IP_PER_WINDOW: "100000",
    OUTBOX_GRACE_SECONDS: "1",
    LEDGER_TRIM_AFTER_SECONDS: "0",
  },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `tasks` with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, task: (item: T, i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        await task(items[i] as T, i);
      }
    }),
  );
}

type Bought = { orderId: string; userId: string; quantity: number; expiresAt: number };

async function buyOut(
  productToken: string,
  users: number,
  quantityOf: (i: number) => number,
): Promise<Bought[]> {
  const bought: Bought[] = [];
  await pool(
    Array.from({ length: users }, (_, i) => i),
    16,
    async (i) => {
      const userId = `u${i}`;
      const res = await app.api.buy(productToken, userId, quantityOf(i));
      if (res.status === 202) {
        bought.push({
          orderId: String(res.body.orderId),
          userId,
          quantity: Number(res.body.quantity),
          expiresAt: Date.parse(String(res.body.expiresAt)),
        });
      }
    },
  );
  return bought;
}

async function waitForStats(
  saleId: string,
  ok: (s: Record<string, number | boolean>) => boolean,
  timeoutMs = 60_000,
) {
  const deadline = Date.now() + timeoutMs;
  let s: Record<string, number | boolean> = {};
  while (Date.now() < deadline) {
    s = (await app.api.stats(saleId)).body as Record<string, number | boolean>;
    if (ok(s)) return s;
    await sleep(250);
  }
  throw new Error(`stats never settled: ${JSON.stringify(s)}`);
}

describe("pay against timeout", () => {
  it("500 races: exactly one of paid or expired wins each, and stock comes back exactly once", {
    timeout: 120_000,
  }, async () => {
    // a window long enough for the 500 buys on a busy machine (beside other files they took 16 s and more)
    const windowSeconds = 30;
    const sale = await app.api.createSale({
      stock: 500,
      perUserLimit: 1,
      paymentWindowSeconds: windowSeconds,
    });
    const bought = await buyOut(sale.productToken, 500, () => 1);
    expect(bought).toHaveLength(500);
    // the races start once every order exists; a slow machine must not let the windows close first
    expect(Math.min(...bought.map((b) => b.expiresAt)) - Date.now()).toBeGreaterThan(1500);
    const payResults = new Map<string, number>();
    await pool(bought, 32, async (order) => {
      // within 3 s either side of the deadline: a busy machine may take a second or two to answer, and
      // with 1 s either side every pay once arrived after its deadline
      const fireAt = order.expiresAt + (Math.random() * 6000 - 3000);
      await sleep(Math.max(0, fireAt - Date.now()));
      const job = { ...order, saleId: sale.saleId, createdAt: order.expiresAt - windowSeconds * 1000 };
      const [pay] = await Promise.all([
        app.api.order(order.orderId, order.userId, "pay"),
        deliverJob(app, "/api/jobs/payment-timeout", job),
      ]);
      payResults.set(order.orderId, pay.status);
    });
    const stats = await waitForStats(
      sale.saleId,
      (s) => s.awaitingPayment === 0 && s.queued === 0 && s.invariantHolds === true,
    );
    const { rows } = await app.db.query<{ id: string; status: string; restored: number }>(
      `select o.id, o.status, (select count(*)::int from order_events e where e.order_id = o.id and e.type = 'restored') as restored
       from orders o where o.sale_id = $1`,
      [sale.saleId],
    );
    expect(rows).toHaveLength(500);
    let paid = 0;
    for (const row of rows) {
      expect(["paid", "expired"]).toContain(row.status);
      const payStatus = payResults.get(row.id);
      if (row.status === "paid") {
        paid++;
        expect(payStatus).toBe(200);
        expect(row.restored).toBe(0);
      } else {
        expect(payStatus).toBe(409);
        expect(row.restored).toBe(1);
      }
    }
    const restores = await app.redis.hkeys(saleKeys(sale.saleId).ledger);
    expect(restores.filter((f) => f.startsWith("x:"))).toHaveLength(500 - paid);
    expect(stats).toMatchObject({
      stock: 500,
      remaining: 500 - paid,
      paid,
      expired: 500 - paid,
      invariantHolds: true,
    });
    expect(paid).toBeGreaterThan(0);
    expect(paid).toBeLessThan(500);
  });
});

describe("a sale bought out, a third never paid", () => {
  it("ends with exactly the paid units gone, every unpaid unit back, Postgres matching the ledger", async () => {
    const stock = 300;
    const sale = await app.api.createSale({ stock, perUserLimit: 2, paymentWindowSeconds: 8 });
    const bought = await buyOut(sale.productToken, 260, (i) => 1 + (i % 2));
    const reservedUnits = bought.reduce((s, b) => s + b.quantity, 0);
    expect(reservedUnits).toBe(stock);
    expect((await app.api.buy(sale.productToken, "latecomer", 1)).status).toBe(410);
    const unpaid = new Set(bought.filter((_, i) => i % 3 === 0).map((b) => b.orderId));
    await pool(
      bought.filter((b) => !unpaid.has(b.orderId)),
      16,
      async (b) => {
        const res = await app.api.order(b.orderId, b.userId, "pay");
        expect(res.status).toBe(200);
      },
    );
    const paidUnits = bought.filter((b) => !unpaid.has(b.orderId)).reduce((s, b) => s + b.quantity, 0);
    const stats = await waitForStats(
      sale.saleId,
      (s) => s.awaitingPayment === 0 && s.pendingRestoreUnits === 0 && s.invariantHolds === true,
    );
    expect(stats).toMatchObject({
      stock,
      remaining: stock - paidUnits,
      paid: bought.length - unpaid.size,
      expired: unpaid.size,
      ordersInDb: bought.length,
      queued: 0,
      invariantHolds: true,
    });
    // every reservation in the Redis ledger has exactly one order with the same user and quantity
    const ledger = await app.redis.hgetall(saleKeys(sale.saleId).ledger);
    const { rows } = await app.db.query<{ id: string; user_id: string; quantity: number }>(
      "select id, user_id, quantity from orders where sale_id = $1",
      [sale.saleId],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const reservations = Object.entries(ledger).filter(([f]) => f.startsWith("r:"));
    expect(reservations).toHaveLength(bought.length);
    for (const [field, json] of reservations) {
      const entry = JSON.parse(json) as { userId: string; quantity: number };
      expect(byId.get(field.slice(2))).toMatchObject({ user_id: entry.userId, quantity: entry.quantity });
    }
    // reconciliation finds nothing to repair and trims the finished entries
    const report = await app.api.admin("POST", `/sales/${sale.saleId}/reconcile`);
    expect(report.status).toBe(200);
    expect(report.body).toMatchObject({
      republished: [],
      ordersWithoutReservation: [],
      mismatched: [],
      drift: 0,
      paused: false,
    });
    expect(Number(report.body.trimmed)).toBe(bought.length + unpaid.size);
    expect(await app.redis.hlen(saleKeys(sale.saleId).ledger)).toBe(0);
    expect((await app.api.stats(sale.saleId)).body).toMatchObject({
      invariantHolds: true,
      remaining: stock - paidUnits,
    });
  });
});
