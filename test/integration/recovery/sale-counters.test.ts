import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeOrders } from "../../../src/orders/order-writes";
import { saleKeys } from "../../../src/stock/keys";
import { parseQueuedOrder } from "../../../src/stock/queued-order";
import { connectPostgresTcp } from "../../../src/stores/postgres-tcp";
import { type AppUnderTest, startApp } from "../../support/app";
import { deliverJob } from "../../support/jobs";
import { reservedEntry } from "../../support/reserved-entry";

/**
 * The stats' counters (sale_counters, kept by the orders' triggers) against a recount of the orders,
 * after everything that moves an order: bursts, duplicated and reordered order-write deliveries,
 * cancels and expiries racing payments, a Redis loss and rebuild; the reconciliation's repair of a
 * planted drift; and an incremental reconciliation run reading only what is new (pg_stat_statements).
 */
const CHUNK = 100;
let app: AppUnderTest;

beforeAll(async () => {
  app = await startApp({
    statementStats: true,
    // Redis restarted here: the stack's one server, whatever the suite's layout
    oneServer: true,
    vars: {
      RECONCILE_CHUNK: String(CHUNK),
      RATE_LIMIT_USER_PER_WINDOW: "1000",
      LEDGER_TRIM_AFTER_SECONDS: "3600",
    },
  });
}, 180_000);
afterAll(async () => {
  await app?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Counters = { [k: string]: number; paid: number; cancelled: number; expired: number };

/** The counters as kept, and as the orders say (the recount, written independently of the engine's). */
async function countersAndRecount(saleId: string): Promise<{ kept: Counters; recount: Counters }> {
  const kept = await app.db.query(
    `select sum(orders)::int as orders, sum(awaiting_payment)::int as awaiting_payment, sum(paid)::int as paid,
       sum(expired)::int as expired, sum(cancelled)::int as cancelled, sum(live_units)::int as live_units,
       sum(unrestored_units)::int as unrestored_units
     from sale_counters where sale_id = $1`,
    [saleId],
  );
  const recount = await app.db.query(
    `select count(*)::int as orders,
       count(*) filter (where status = 'awaiting_payment')::int as awaiting_payment,
       count(*) filter (where status = 'paid')::int as paid,
       count(*) filter (where status = 'expired')::int as expired,
       count(*) filter (where status = 'cancelled')::int as cancelled,
       coalesce(sum(quantity) filter (where status in ('awaiting_payment', 'paid')), 0)::int as live_units,
       coalesce(sum(quantity) filter (where status in ('expired', 'cancelled') and restored_at is null), 0)::int
         as unrestored_units
     from orders where sale_id = $1`,
    [saleId],
  );
  return { kept: (kept.rows[0] ?? {}) as Counters, recount: recount.rows[0] as Counters };
}

async function expectCountersExact(saleId: string) {
  const { kept, recount } = await countersAndRecount(saleId);
  expect(kept).toEqual(recount);
  return recount;
}

async function stats(saleId: string) {
  return (await app.api.stats(saleId)).body as Record<string, number | boolean | string[]>;
}

/** Rows retrieved by the statements Postgres ran since the last reset (the engine's; not the test's reads). */
async function rowsRead(): Promise<number> {
  await app.db.query("create extension if not exists pg_stat_statements");
  const { rows } = await app.db.query<{ n: string }>(
    `select coalesce(sum(rows), 0)::text as n from pg_stat_statements
     where dbid = (select oid from pg_database where datname = current_database())
       and query not ilike '%pg_stat_statements%' and query ilike '%orders%'`,
  );
  return Number(rows[0]?.n ?? 0);
}

describe("the counters equal a recount", () => {
  it("after a burst, duplicated and reordered deliveries, and cancels and expiries racing payments", async () => {
    const sale = await app.api.createSale({ stock: 400, perUserLimit: 4, paymentWindowSeconds: 600 });
    const bought = await Promise.all(
      Array.from({ length: 60 }, (_, i) => app.api.buy(sale.productToken, `b-${i}`, 1 + (i % 3))),
    );
    expect(bought.every((r) => r.status === 202)).toBe(true);
    // reservations whose order write comes twice at once and again reordered, the last in a batch of its own
    const entries = await Promise.all(
      Array.from({ length: 12 }, (_, i) => reservedEntry(app, sale.saleId, `d-${i}`, 1 + (i % 2))),
    );
    const job = { orders: entries };
    const reordered = { orders: [...entries].reverse() };
    const deliveries = await Promise.all([
      deliverJob(app, "/api/jobs/order-write", job),
      deliverJob(app, "/api/jobs/order-write", reordered),
      deliverJob(app, "/api/jobs/order-write", { orders: entries.slice(0, 5) }),
      deliverJob(app, "/api/jobs/order-write", entries.at(-1)),
    ]);
    expect(deliveries.map((d) => d.status)).toEqual([200, 200, 200, 200]);
    await app.drain();
    expect(await expectCountersExact(sale.saleId)).toMatchObject({ orders: 72, awaiting_payment: 72 });

    // every order paid and cancelled at once (one wins each), some delivered their timeout as well
    const orders = bought.map((r, i) => ({ orderId: String(r.body.orderId), userId: `b-${i}` }));
    const racing = orders.slice(0, 30);
    await app.db.query(
      "update orders set expires_at = now() + interval '400 milliseconds' where id = any($1)",
      [racing.slice(0, 10).map((o) => o.orderId)],
    );
    await sleep(380);
    const timeouts = racing
      .slice(0, 10)
      .map((o) => ({ ...entryOf(entries[0], o), expiresAt: Date.now() - 1 }));
    await Promise.all([
      ...racing.flatMap((o) => [
        app.api.order(o.orderId, o.userId, "pay"),
        app.api.order(o.orderId, o.userId, "cancel"),
      ]),
      deliverJob(app, "/api/jobs/payment-timeout", { orders: timeouts }),
      deliverJob(app, "/api/jobs/payment-timeout", { orders: [...timeouts].reverse() }),
      sleep(60).then(() => deliverJob(app, "/api/jobs/payment-timeout", { orders: timeouts })),
    ]);
    await app.drain();
    const counted = await expectCountersExact(sale.saleId);
    expect(counted.paid + counted.cancelled + counted.expired).toBe(30);
    expect(counted.paid).toBeGreaterThan(0);
    expect(counted.cancelled + counted.expired).toBeGreaterThan(0);
    await waitFor(async () => (await stats(sale.saleId)).pendingRestoreUnits === 0);
    const figures = await stats(sale.saleId);
    expect(figures).toMatchObject({
      ordersInDb: 72,
      paid: counted.paid,
      awaitingPayment: counted.awaiting_payment,
      queued: 0,
      invariantHolds: true,
    });
    await expectCountersExact(sale.saleId);
  });

  it("through a Redis loss and the rebuild from Postgres", async () => {
    const sale = await app.api.createSale({ stock: 50, perUserLimit: 3 });
    const bought = await Promise.all(
      Array.from({ length: 15 }, (_, i) => app.api.buy(sale.productToken, `r-${i}`, 1 + (i % 2))),
    );
    await app.drain();
    for (const [i, r] of bought.slice(0, 4).entries())
      await app.api.order(String(r.body.orderId), `r-${i}`, i % 2 === 0 ? "pay" : "cancel");
    await app.drain();
    await app.stack.redis.restart({ empty: true });
    await app.reconnect();
    // the first requests after the restart may still meet the old connection: 503, then the rebuild
    await waitFor(async () => (await app.api.admin("POST", `/sales/${sale.saleId}/rebuild`)).status === 200);
    await app.drain();
    const counted = await expectCountersExact(sale.saleId);
    expect(counted).toMatchObject({ orders: 15, paid: 2, cancelled: 2, unrestored_units: 0 });
    expect(await stats(sale.saleId)).toMatchObject({
      ordersInDb: 15,
      invariantHolds: true,
      pendingRestoreUnits: 0,
    });
  });
});

describe("the stats between an order's write and its acknowledgement", () => {
  it("count an order Postgres has and Redis still queues once: by its status in Postgres", async () => {
    const sale = await app.api.createSale({ stock: 10, perUserLimit: 2, paymentWindowSeconds: 600 });
    app.stack.qstash.pause();
    try {
      expect((await app.api.buy(sale.productToken, "written-unacked", 2)).status).toBe(202);
      expect(await stats(sale.saleId)).toMatchObject({ queued: 1, awaitingPayment: 0, ordersInDb: 0 });
      // the order write's first half, as a delivery that wrote and died before acknowledging does
      const queued = Object.values(await app.redis.hgetall(saleKeys(sale.saleId).orders))
        .map((json) => parseQueuedOrder(sale.saleId, json))
        .filter((o) => o !== null);
      expect(queued).toHaveLength(1);
      const db = connectPostgresTcp(app.stack.vars.DATABASE_URL, { max: 1 });
      try {
        await writeOrders(db, queued);
      } finally {
        await db.close();
      }
      expect(await stats(sale.saleId)).toMatchObject({
        queued: 0,
        awaitingPayment: 1,
        ordersInDb: 1,
        remaining: 8,
        invariantHolds: true,
      });
    } finally {
      app.stack.qstash.resume();
    }
    await app.drain();
    expect(await stats(sale.saleId)).toMatchObject({ queued: 0, awaitingPayment: 1, ordersInDb: 1 });
  });
});

describe("the reconciliation", () => {
  it("finds a planted counter drift, reports it and repairs it", async () => {
    const sale = await app.api.createSale({ stock: 20 });
    for (let i = 0; i < 4; i++) await app.api.buy(sale.productToken, `p-${i}`, 2);
    await app.drain();
    expect(await stats(sale.saleId)).toMatchObject({ invariantHolds: true, awaitingPayment: 4 });
    await app.db.query(
      `update sale_counters set live_units = live_units + 3, paid = paid + 5
       where sale_id = $1 and shard = (select min(shard) from sale_counters where sale_id = $1)`,
      [sale.saleId],
    );
    const drifted = await stats(sale.saleId);
    expect(drifted).toMatchObject({ invariantHolds: false, paid: 5 });
    const report = await app.api.admin("POST", `/sales/${sale.saleId}/reconcile`);
    expect(report.status).toBe(200);
    expect(report.body).toMatchObject({
      passComplete: true,
      counters: {
        checked: true,
        repaired: expect.arrayContaining([
          { counter: "paid", was: 5, recounted: 0 },
          { counter: "live_units", was: 11, recounted: 8 },
        ]),
      },
      drift: 0,
      paused: false,
    });
    expect(await stats(sale.saleId)).toMatchObject({ invariantHolds: true, paid: 0, awaitingPayment: 4 });
    await expectCountersExact(sale.saleId);
  });

  it("an incremental run reads a bounded chunk and only the orders written since the last one", async () => {
    const sale = await app.api.createSale({ stock: 1000, perUserLimit: 1 });
    const first = await buyMany(sale.productToken, "i", 310);
    await app.drain();
    await sleep(5_500);
    const whole = await app.api.admin("POST", `/sales/${sale.saleId}/reconcile?full=1`);
    expect(whole.body).toMatchObject({
      full: true,
      checkedOrders: first,
      checkedLedgerEntries: first,
      mismatched: [],
    });
    await buyMany(sale.productToken, "j", 10);
    await app.drain();
    await sleep(5_500);
    const before = await rowsRead();
    const run = await app.api.admin("POST", `/sales/${sale.saleId}/reconcile`);
    const read = (await rowsRead()) - before;
    expect(run.body).toMatchObject({ full: false, checkedOrders: 10, mismatched: [], drift: 0 });
    // one chunk of the ledger (HSCAN's COUNT is a hint: within twice the chunk), not its 320 entries
    expect(Number(run.body.checkedLedgerEntries)).toBeLessThanOrEqual(2 * CHUNK);
    expect(read).toBeLessThan(2 * CHUNK + 10 + 10);
    // nothing new: nothing of the orders read but the next ledger chunk's
    const again = await app.api.admin("POST", `/sales/${sale.saleId}/reconcile`);
    expect(again.body).toMatchObject({ checkedOrders: 0 });
    // the full run, for scale: every order
    const beforeFull = await rowsRead();
    await app.api.admin("POST", `/sales/${sale.saleId}/reconcile?full=1`);
    expect((await rowsRead()) - beforeFull).toBeGreaterThanOrEqual(2 * 320);
  });
});

/** `n` buys by distinct users, 20 at a time; answers how many were admitted. */
async function buyMany(productToken: string, prefix: string, n: number): Promise<number> {
  let admitted = 0;
  for (let i = 0; i < n; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, n - i) }, (_, k) =>
        app.api.buy(productToken, `${prefix}-${i + k}`, 1),
      ),
    );
    admitted += batch.filter((r) => r.status === 202).length;
  }
  return admitted;
}

/** A job entry for an order bought through the API, shaped like `template` (a reserved entry). */
function entryOf(template: Record<string, unknown> | undefined, o: { orderId: string; userId: string }) {
  return { ...template, orderId: o.orderId, userId: o.userId, quantity: 1 };
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await sleep(200);
  }
}
