import { describe, expect, it } from "vitest";
import { newOrderId } from "../../../src/ids";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { deliverJob } from "../../support/jobs";
import { reserve } from "../../support/lua";

const app = appForFile({
  // Redis paused, restarted or flushed here: the stack's one server, whatever the suite's layout
  oneServer: true,
  vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", CATALOG_REFRESH_MS: "600000", BUY_RESOLVE_WINDOW_MS: "1000" },
});

async function eventually<T>(call: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await call();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const errorCode = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;

/** What Redis says about one sale's stock, holdings, queued orders and outbox. */
async function saleState(saleId: string) {
  const k = saleKeys(saleId);
  return {
    stock: await app.redis.get(k.stock),
    holdings: await app.redis.hgetall(k.holdings),
    queued: await app.redis.hkeys(k.orders),
    outbox: await app.redis.zrange(k.outbox, "0", "-1"),
  };
}

async function orderRows(orderId: string) {
  const { rows } = await app.db.query<{ status: string; restored: boolean }>(
    "select status, restored_at is not null as restored from orders where id = $1",
    [orderId],
  );
  return rows;
}

const voidJob = (saleId: string, orderId: string, userId: string, idempotencyKey: string | null = null) => ({
  saleId,
  orderId,
  userId,
  quantity: 1,
  idempotencyKey,
});

describe("a reservation whose outcome is still unknown at the deadline is voided", () => {
  it("Redis paused past the resolve window: 503, and the script that commits later is undone", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    await app.api.buy(sale.productToken, "warm-up", 1);
    // the warm-up's order written (its batch may be published after a first drain) before the snapshot
    const before = await eventually(
      async () => {
        await app.drain();
        return saleState(sale.saleId);
      },
      (s) => s.outbox.length === 0 && s.queued.length === 0,
    );
    const published = app.stack.qstash.delivered.published;
    // Scripts wait 11 s: every run of the attempt (1 s window) and the route's own void time out; the
    // REST stand-in's fault mode answers 503 after 900 ms while each run stays queued and commits later.
    app.stack.upstash.setFaults({ replyTimeoutMs: 900 });
    await app.redis.call("CLIENT", "PAUSE", "11000", "WRITE");
    const res = await app.api
      .buy(sale.productToken, "late-commit", 1)
      .finally(() => app.stack.upstash.setFaults({ replyTimeoutMs: null }));
    expect([res.status, errorCode(res.body)], res.text).toEqual([503, "UNAVAILABLE"]);
    expect(app.stack.qstash.delivered.published, "a void job was handed to QStash").toBeGreaterThan(
      published,
    );
    const ledger = await eventually(
      () => app.redis.hkeys(saleKeys(sale.saleId).ledger),
      (keys) => keys.some((f) => f.startsWith("x:")),
    );
    const voided = ledger.find((f) => f.startsWith("x:"))?.slice(2) ?? "";
    expect(voided).not.toBe("");
    const after = await eventually(
      () => saleState(sale.saleId),
      (s) => JSON.stringify(s) === JSON.stringify(before),
    );
    expect(after, "stock, holdings, queued orders and outbox as if nothing was reserved").toEqual(before);
    await app.drain(30_000);
    expect(await saleState(sale.saleId)).toEqual(before);
    const rows = await orderRows(voided);
    // nothing in Postgres, or (when the script had committed) recorded cancelled and restored
    expect(rows.length === 0 || (rows[0]?.status === "cancelled" && rows[0]?.restored)).toBe(true);
    const seen = await app.api.order(voided, "late-commit");
    expect(seen.status === 404 || seen.body.status === "cancelled", seen.text).toBe(true);
  });

  it("a void that finds no reservation leaves a marker: a later run with that order id reserves nothing", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    const orderId = newOrderId(sale.saleId);
    const before = await saleState(sale.saleId);
    const res = await deliverJob(app, "/api/jobs/void-reservation", voidJob(sale.saleId, orderId, "marked"));
    expect(res.status, res.text).toBe(200);
    const late = await reserve(app.redis, sale.saleId, {
      orderId,
      userId: "marked",
      quantity: 1,
      now: Date.now(),
    });
    expect(late[0]).toBe(11);
    expect(await saleState(sale.saleId)).toEqual(before);
    await app.drain();
    expect(await orderRows(orderId)).toEqual([]);
  });

  it("void twice, a late run, void again: the units come back exactly once and the order is cancelled", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    const before = await saleState(sale.saleId);
    const orderId = newOrderId(sale.saleId);
    const first = await reserve(app.redis, sale.saleId, {
      orderId,
      userId: "twice",
      quantity: 1,
      now: Date.now(),
      idem: "k3",
    });
    expect(first[0]).toBe(1);
    const job = voidJob(sale.saleId, orderId, "twice", "k3");
    expect((await deliverJob(app, "/api/jobs/void-reservation", job)).status).toBe(200);
    expect((await deliverJob(app, "/api/jobs/void-reservation", job)).status).toBe(200);
    const late = await reserve(app.redis, sale.saleId, {
      orderId,
      userId: "twice",
      quantity: 1,
      now: Date.now(),
    });
    expect(late[0]).toBe(11);
    expect((await deliverJob(app, "/api/jobs/void-reservation", job)).status).toBe(200);
    expect(await saleState(sale.saleId)).toEqual(before);
    expect(await orderRows(orderId)).toEqual([{ status: "cancelled", restored: true }]);
    // the key's answer pointed at the voided order: it is gone, so a keyed retry buys afresh
    const retry = await app.api.buy(sale.productToken, "twice", 1, { "Idempotency-Key": "k3" });
    expect(retry.status).toBe(202);
    expect(retry.body.orderId).not.toBe(orderId);
    await app.drain();
    const stats = await app.api.stats(sale.saleId);
    expect(stats.body).toMatchObject({
      remaining: 2,
      cancelled: 1,
      awaitingPayment: 1,
      invariantHolds: true,
    });
  });

  it("a keyed retry that replayed the reservation claims it: the void leaves it alone", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    const orderId = newOrderId(sale.saleId);
    await reserve(app.redis, sale.saleId, {
      orderId,
      userId: "claimer",
      quantity: 1,
      now: Date.now(),
      idem: "k4",
    });
    const retry = await app.api.buy(sale.productToken, "claimer", 1, { "Idempotency-Key": "k4" });
    expect([retry.status, retry.body.orderId]).toEqual([202, orderId]);
    const res = await deliverJob(
      app,
      "/api/jobs/void-reservation",
      voidJob(sale.saleId, orderId, "claimer", "k4"),
    );
    expect(res.status, res.text).toBe(200);
    const order = await eventually(
      () => app.api.order(orderId, "claimer"),
      (r) => r.body.status === "awaiting_payment",
    );
    expect(order.body).toMatchObject({ status: "awaiting_payment", quantity: 1 });
    expect(await app.redis.get(saleKeys(sale.saleId).stock)).toBe(String(2));
    const again = await app.api.buy(sale.productToken, "claimer", 1, { "Idempotency-Key": "k4" });
    expect([again.status, again.body.orderId]).toEqual([202, orderId]);
  });

  it("the void job route refuses bad signatures (401) and malformed bodies (400), changing nothing", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    const orderId = newOrderId(sale.saleId);
    await reserve(app.redis, sale.saleId, { orderId, userId: "sig", quantity: 1, now: Date.now() });
    const before = await saleState(sale.saleId);
    const job = voidJob(sale.saleId, orderId, "sig");
    const path = "/api/jobs/void-reservation";
    expect((await deliverJob(app, path, job, { signingKey: "sig_not_the_key" })).status).toBe(401);
    expect(
      (await deliverJob(app, path, job, { signedUrl: `${app.worker.url}/api/jobs/order-write` })).status,
    ).toBe(401);
    expect((await deliverJob(app, path, job, { tamper: (r) => r.replace(/}$/, ',"x":1}') })).status).toBe(
      401,
    );
    for (const bad of [
      { ...job, orderId: "not-an-order" },
      { ...job, saleId: "s00000000000" },
      { ...job, userId: "" },
      { ...job, quantity: 0 },
      { ...job, idempotencyKey: "has space" },
      [job],
      "text",
    ]) {
      const res = await deliverJob(app, path, bad);
      expect([res.status, JSON.stringify(bad)]).toEqual([400, JSON.stringify(bad)]);
    }
    expect(await saleState(sale.saleId)).toEqual(before);
  });
});
