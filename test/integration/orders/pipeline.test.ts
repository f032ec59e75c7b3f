import { describe, expect, it } from "vitest";
import { newOrderId } from "../../../src/ids";
import { appForFile } from "../../support/app-per-file";
import { deliverJob } from "../../support/jobs";
import { reserve } from "../../support/lua";
import { checkedFetch } from "../../support/openapi-check";

const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", OUTBOX_GRACE_SECONDS: "1" } });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const code = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;

async function pollStatus(orderId: string, userId: string, want: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await app.api.order(orderId, userId)).body;
    if (last.status === want) return last;
    await sleep(100);
  }
  throw new Error(`order ${orderId} never became ${want}: ${JSON.stringify(last)}`);
}

async function stats(saleId: string) {
  return (await app.api.stats(saleId)).body as Record<string, number | boolean>;
}

async function dbOrders(saleId: string) {
  const { rows } = await app.db.query<{
    id: string;
    user_id: string;
    quantity: number;
    status: string;
    restored_at: Date | null;
  }>("select id, user_id, quantity, status, restored_at from orders where sale_id = $1", [saleId]);
  return rows;
}

describe("the order pipeline on real servers", () => {
  it("buy → queued → awaiting_payment → pay → paid; paying again is a no-op", async () => {
    const sale = await app.api.createSale({ stock: 5, priceCents: 1200 });
    const buy = await app.api.buy(sale.productToken, "flow-1", 2);
    expect(buy.status).toBe(202);
    const orderId = String(buy.body.orderId);
    const awaiting = await pollStatus(orderId, "flow-1", "awaiting_payment");
    expect(awaiting).toMatchObject({ orderId, saleId: sale.saleId, quantity: 2 });
    const paid = await app.api.order(orderId, "flow-1", "pay");
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ status: "paid" });
    expect(typeof paid.body.paidAt).toBe("string");
    const again = await app.api.order(orderId, "flow-1", "pay");
    expect([again.status, again.body.paidAt]).toEqual([200, paid.body.paidAt]);
    expect((await app.api.order(orderId, "someone-else", "pay")).status).toBe(404);
    const cancel = await app.api.order(orderId, "flow-1", "cancel");
    expect([cancel.status, code(cancel.body)]).toEqual([409, "ORDER_PAID"]);
    const { rows } = await app.db.query("select type from order_events where order_id = $1 order by id", [
      orderId,
    ]);
    // the write itself is the order's row (written_at); the flow record holds the changes after it
    expect(rows.map((r) => r.type)).toEqual(["paid"]);
  });

  it("buy → the payment window passes → expired, units back exactly once, late payment refused", async () => {
    const sale = await app.api.createSale({ stock: 3, paymentWindowSeconds: 1 });
    const buy = await app.api.buy(sale.productToken, "late-payer", 2);
    const orderId = String(buy.body.orderId);
    await pollStatus(orderId, "late-payer", "expired", 20_000);
    await app.drain();
    expect(await stats(sale.saleId)).toMatchObject({ remaining: 3, expired: 1, invariantHolds: true });
    const late = await app.api.order(orderId, "late-payer", "pay");
    expect([late.status, code(late.body)]).toEqual([409, "ORDER_EXPIRED"]);
    // the timeout delivered again restores nothing
    const job = {
      orderId,
      saleId: sale.saleId,
      userId: "late-payer",
      quantity: 2,
      createdAt: Date.now(),
      expiresAt: Date.now(),
    };
    expect((await deliverJob(app, "/api/jobs/payment-timeout", job)).status).toBe(200);
    expect(await stats(sale.saleId)).toMatchObject({ remaining: 3 });
    // the allowance came back too
    expect((await app.api.buy(sale.productToken, "late-payer", 2)).status).toBe(202);
  });

  it("cancel while queued gives units back at once; the late order write cannot resurrect it", async () => {
    const sale = await app.api.createSale({ stock: 2 });
    app.stack.qstash.pause();
    let orderId = "";
    try {
      const buy = await app.api.buy(sale.productToken, "canceller", 2);
      orderId = String(buy.body.orderId);
      expect((await app.api.order(orderId, "canceller")).body.status).toBe("queued");
      const cancel = await app.api.order(orderId, "canceller", "cancel");
      expect([cancel.status, cancel.body.status]).toEqual([200, "cancelled"]);
      expect(await stats(sale.saleId)).toMatchObject({ remaining: 2 });
    } finally {
      app.stack.qstash.resume();
    }
    await app.drain();
    expect((await app.api.order(orderId, "canceller")).body.status).toBe("cancelled");
    expect(await stats(sale.saleId)).toMatchObject({ remaining: 2, cancelled: 1, invariantHolds: true });
    const pay = await app.api.order(orderId, "canceller", "pay");
    expect([pay.status, code(pay.body)]).toEqual([409, "ORDER_CANCELLED"]);
  });

  it("paying a still-queued order works: the order is written on the spot", async () => {
    const sale = await app.api.createSale({ stock: 2 });
    app.stack.qstash.pause();
    try {
      const buy = await app.api.buy(sale.productToken, "eager", 1);
      const pay = await app.api.order(String(buy.body.orderId), "eager", "pay");
      expect([pay.status, pay.body.status]).toEqual([200, "paid"]);
    } finally {
      app.stack.qstash.resume();
    }
    await app.drain();
    expect(await stats(sale.saleId)).toMatchObject({
      paid: 1,
      queued: 0,
      ordersInDb: 1,
      invariantHolds: true,
    });
  });

  it("every job delivered twice and out of order still writes each order exactly once", async () => {
    const sale = await app.api.createSale({ stock: 50, perUserLimit: 2 });
    app.stack.qstash.setFaults({ duplicateRate: 1, delayJitterMs: 400 });
    try {
      const buys = await Promise.all(
        Array.from({ length: 30 }, (_, i) => app.api.buy(sale.productToken, `dup-${i}`, 1 + (i % 2))),
      );
      expect(buys.every((b) => b.status === 202)).toBe(true);
      await sleep(300);
      await app.drain();
    } finally {
      app.stack.qstash.setFaults({ duplicateRate: 0, delayJitterMs: 0 });
    }
    const rows = await dbOrders(sale.saleId);
    expect(rows).toHaveLength(30);
    // each written once: one row per order (its primary key), and the holdings count each order once
    const { rows: held } = await app.db.query(
      "select coalesce(sum(units), 0)::int as n from holdings where sale_id = $1",
      [sale.saleId],
    );
    expect(held[0].n).toBe(45); // 15 shoppers of 1 unit, 15 of 2
    expect(await stats(sale.saleId)).toMatchObject({
      queued: 0,
      awaitingPayment: 30,
      remaining: 5,
      invariantHolds: true,
    });
  });

  it("rejects forged, expired, misdirected and tampered signatures and writes nothing", async () => {
    const sale = await app.api.createSale({ stock: 1 });
    const orderId = newOrderId(sale.saleId);
    const job = {
      orderId,
      saleId: sale.saleId,
      userId: "forger",
      quantity: 1,
      createdAt: Date.now(),
      expiresAt: Date.now() + 60_000,
    };
    const path = "/api/jobs/order-write";
    const attempts = [
      await deliverJob(app, path, job, { signingKey: "sig_not_the_key" }),
      await deliverJob(app, path, job, { now: Date.now() - 3600_000 }),
      await deliverJob(app, path, job, {
        signedUrl: `${app.worker.url}/api/jobs/payment-timeout`,
      }),
      await deliverJob(app, path, job, {
        tamper: (raw) => raw.replace('"quantity":1', '"quantity":9'),
      }),
      await checkedFetch(`${app.worker.url}${path}`, { method: "POST", body: JSON.stringify(job) }).then(
        async (r) => ({ status: r.status, text: await r.text() }),
      ),
    ];
    expect(attempts.map((a) => a.status)).toEqual([401, 401, 401, 401, 401]);
    expect(await dbOrders(sale.saleId)).toHaveLength(0);
    // the next signing key is accepted (key rotation)
    const rotated = await deliverJob(
      app,
      path,
      { ...job, orderId: newOrderId(sale.saleId) },
      { signingKey: app.stack.vars.QSTASH_NEXT_SIGNING_KEY },
    );
    expect(rotated.status).toBe(200);
  });

  it("a worker that dies between the script and the publish loses no order: the sweeper republishes", async () => {
    const sale = await app.api.createSale({ stock: 3, paymentWindowSeconds: 600 });
    const orderId = newOrderId(sale.saleId);
    const reply = await reserve(app.redis, sale.saleId, {
      orderId,
      userId: "orphan",
      quantity: 1,
      now: Date.now(),
    });
    expect(reply[0]).toBe(1);
    await sleep(1200);
    await app.worker.scheduled();
    await app.drain();
    expect((await app.api.order(orderId, "orphan")).body.status).toBe("awaiting_payment");
    expect(await stats(sale.saleId)).toMatchObject({ queued: 0, ordersInDb: 1, invariantHolds: true });
  });

  it("an order write that fails while Postgres is down lands once it is back", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    await app.stack.postgres.stop();
    let orderId = "";
    try {
      const buy = await app.api.buy(sale.productToken, "patient", 1);
      expect(buy.status).toBe(202);
      orderId = String(buy.body.orderId);
      await sleep(1500);
      expect((await app.api.order(orderId, "patient")).body.status).toBe("queued");
    } finally {
      await app.stack.postgres.start();
    }
    await sleep(1000);
    await app.worker.scheduled();
    await pollStatus(orderId, "patient", "awaiting_payment", 30_000);
    await app.drain();
    expect(await stats(sale.saleId)).toMatchObject({ queued: 0, ordersInDb: 1, invariantHolds: true });
  });
});
