import { afterEach, describe, expect, it } from "vitest";
import { newOrderId } from "../../../src/ids";
import { ScriptCode } from "../../../src/stock/codes";
import { catalogKeys, saleKeys } from "../../../src/stock/keys";
import { encodeLedgerEntry, ledgerField } from "../../../src/stock/ledger-entry";
import { appForFile } from "../../support/app-per-file";
import { lua, rebuild, reserve, restore } from "../../support/lua";

const app = appForFile({
  vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", RECOVERY_QUIET_SECONDS: "1", OUTBOX_GRACE_SECONDS: "1" },
});
afterEach(() => {
  app?.stack.qstash.resume();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await sleep(100);
    value = await read();
  }
  return value;
}

/** A reservation made by the script alone: the 202 went out, the isolate died before publishing. */
async function unpublished(saleId: string, userId: string, quantity: number): Promise<string> {
  const orderId = newOrderId(saleId);
  const reply = await reserve(app.redis, saleId, { orderId, userId, quantity, now: Date.now() });
  expect(Number(reply[0])).toBe(1);
  return orderId;
}

const liveRows = async (saleId: string) =>
  (
    await app.db.query<{ id: string; user_id: string; quantity: number }>(
      "select id, user_id, quantity from orders where sale_id = $1 and status in ('awaiting_payment', 'paid')",
      [saleId],
    )
  ).rows;

describe("operator rebuild on a live Redis", () => {
  it("keeps, counts and republishes reservations Postgres has not seen yet (unpublished orders)", async () => {
    const stock = 6;
    const sale = await app.api.createSale({ stock, perUserLimit: 2, paymentWindowSeconds: 600 });
    expect((await app.api.buy(sale.productToken, "written", 2)).status).toBe(202);
    await app.drain();
    const lost = await unpublished(sale.saleId, "unpublished", 2);

    const rebuilt = await app.api.admin("POST", `/sales/${sale.saleId}/rebuild`);
    expect(rebuilt.status).toBe(200);
    // the unpublished order is still an order, still counted in the stock and the user's holding
    expect((await app.api.order(lost, "unpublished")).status).toBe(200);
    expect(await app.redis.get(saleKeys(sale.saleId).stock)).toBe(String(stock - 4));
    expect(await app.redis.hget(saleKeys(sale.saleId).holdings, "unpublished")).toBe("2");

    // it reaches Postgres (republished), and its units are not sold a second time
    await app.drain();
    await until(
      () => liveRows(sale.saleId),
      (rows) => rows.some((r) => r.id === lost),
    );
    await until(
      async () => (await app.api.call("GET", `/api/sales/${sale.saleId}`)).body.status,
      (s) => s !== "paused",
    );
    const after = await Promise.all(["a", "b", "c"].map((u) => app.api.buy(sale.productToken, u, 2)));
    expect(after.filter((r) => r.status === 202)).toHaveLength(1);
    await app.drain();
    const rows = await liveRows(sale.saleId);
    expect(rows.reduce((s, r) => s + r.quantity, 0)).toBe(stock);
    expect((await app.api.stats(sale.saleId)).body).toMatchObject({
      stock,
      remaining: 0,
      queued: 0,
      invariantHolds: true,
    });
  });
});

describe("restores and order writes around rebuilds (the scripts on a real Redis)", () => {
  const ledgerEntry = (orderId: string, userId: string, quantity: number, epoch: number) =>
    encodeLedgerEntry({
      type: "reserve",
      orderId,
      userId,
      quantity,
      at: Date.now(),
      expiresAt: Date.now(),
      epoch,
    });

  it("a cancel restored before its order write counts it leaves nothing held (no unit leak)", async () => {
    const sale = await app.api.createSale({ stock: 4, perUserLimit: 2 });
    const keys = saleKeys(sale.saleId);
    const orderId = newOrderId(sale.saleId);
    // the order came from a lost Redis; it is cancelled in Postgres and its restore runs first ...
    const restored = await restore(app.redis, sale.saleId, {
      orderId,
      userId: "late",
      quantity: 2,
      now: Date.now(),
    });
    expect(Number(restored[0])).toBe(ScriptCode.NOT_RESERVED);
    // ... then its order write, which read the order as live a moment earlier, makes Redis count it
    await app.redis.eval(
      lua("debit-stock"),
      4,
      keys.meta,
      keys.stock,
      keys.holdings,
      keys.ledger,
      String(Date.now()),
      "1",
      orderId,
      "late",
      "2",
    );
    expect(await app.redis.get(keys.stock)).toBe("4");
    expect(await app.redis.hget(keys.holdings, "late")).toBeNull();
  });

  it("an order cancelled into the old Redis after the rebuild read Postgres is not counted again", async () => {
    const stock = 4;
    const sale = await app.api.createSale({ stock, perUserLimit: 2 });
    const res = await app.api.buy(sale.productToken, "canceller", 2);
    expect(res.status).toBe(202);
    await app.drain();
    const orderId = String(res.body.orderId);
    const keys = saleKeys(sale.saleId);
    // Postgres (read by the rebuild) still had the order live; then it was cancelled and restored into
    // the old Redis; then the rebuild's script runs with what it read
    expect((await app.api.order(orderId, "canceller", "cancel")).status).toBe(200);
    expect(await app.redis.get(keys.stock)).toBe(String(stock));
    const meta = await app.redis.hgetall(keys.meta);
    await rebuild(app.redis, sale.saleId, {
      meta: { ...meta, epoch: "2" },
      remaining: stock - 2,
      holdings: { canceller: 2 },
      ledger: { [ledgerField("reserve", orderId)]: ledgerEntry(orderId, "canceller", 2, 2) },
    });
    expect(await app.redis.get(keys.stock)).toBe(String(stock));
    expect(await app.redis.hget(keys.holdings, "canceller")).toBeNull();
  });

  it("a pause written into a lost sale creates no partial meta hash", async () => {
    const keys = saleKeys("s-never-there");
    await app.redis.del(keys.meta);
    await app.redis.eval(lua("set-sale-paused"), 1, keys.meta, "1");
    expect(await app.redis.exists(keys.meta)).toBe(0);
  });
});

describe("Redis lost (restarted empty): what recovery rebuilds, and how often it tries", () => {
  const commandCalls = async (name: string) => {
    const info = await app.redis.info("commandstats");
    const m = new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info);
    return Number(m?.[1] ?? 0);
  };

  it("503s during an outage do not each start a recovery (debounced per isolate)", async () => {
    const sale = await app.api.createSale({ stock: 4 });
    expect((await app.api.buy(sale.productToken, "warm", 1)).status).toBe(202);
    await app.drain();
    await app.redis.flushall();
    // another isolate holds the recovery lock: every recovery attempt reads Postgres and tries the lock
    await app.redis.set(catalogKeys.restoring, "elsewhere", "PX", 60_000);
    const before = await commandCalls("set");
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) => app.api.buy(sale.productToken, `outage-${i}`, 1)),
    );
    expect(replies.every((r) => r.status === 503)).toBe(true);
    let last = -1;
    let now = await commandCalls("set");
    while (now !== last) {
      last = now;
      await sleep(500);
      now = await commandCalls("set");
    }
    expect(now - before).toBeLessThanOrEqual(3);
    await app.redis.del(catalogKeys.restoring);
    await app.worker.scheduled();
  });

  it("a sale that already ended is rebuilt too, so its restores finish", async () => {
    const sale = await app.api.createSale({ stock: 4, endsAt: new Date(Date.now() + 3000).toISOString() });
    const res = await app.api.buy(sale.productToken, "ended", 2);
    expect(res.status).toBe(202);
    await app.drain();
    await until(
      async () => (await app.api.call("GET", `/api/sales/${sale.saleId}`)).body.status,
      (s) => s === "ended",
    );
    await app.redis.flushall();
    expect((await app.api.order(String(res.body.orderId), "ended", "cancel")).status).toBe(200);
    await app.worker.scheduled();
    const { rows } = await app.db.query(
      "select id from orders where sale_id = $1 and status in ('expired', 'cancelled') and restored_at is null",
      [sale.saleId],
    );
    expect(rows).toEqual([]);
    expect(await app.redis.hget(saleKeys(sale.saleId).meta, "epoch")).not.toBeNull();
  });

  it("a meta hash holding only a pause flag (written while Redis was lost) is rebuilt, not served as a sale", async () => {
    const sale = await app.api.createSale({ stock: 4 });
    await app.redis.flushall();
    await app.redis.hset(saleKeys(sale.saleId).meta, "paused", "1");
    await app.worker.scheduled();
    expect(await app.redis.hget(saleKeys(sale.saleId).meta, "saleId")).toBe(sale.saleId);
    const view = await until(
      () => app.api.call("GET", `/api/sales/${sale.saleId}`),
      (r) => r.status === 200 && r.body.status === "live",
    );
    expect([view.status, view.body.status]).toEqual([200, "live"]);
  });
});

describe("a rebuild that died half-way", () => {
  it("is finished by the cron: Postgres a generation ahead of Redis is rebuilt, and order writes land again", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    const first = await app.api.buy(sale.productToken, "half-way-1", 1);
    expect(first.status).toBe(202);
    await app.drain();
    // the rebuild's transaction committed (a new epoch in Postgres), then its isolate died before the script
    await app.db.query("update sales set epoch = epoch + 1 where id = $1", [sale.saleId]);
    const { rows } = await app.db.query<{ epoch: number }>("select epoch from sales where id = $1", [
      sale.saleId,
    ]);
    const epoch = Number(rows[0]?.epoch);
    expect(Number(await app.redis.hget(saleKeys(sale.saleId).meta, "epoch"))).toBe(epoch - 1);
    await app.worker.scheduled();
    expect(Number(await app.redis.hget(saleKeys(sale.saleId).meta, "epoch"))).toBeGreaterThanOrEqual(epoch);
    // after the quiet period the sale sells again and its orders are written and counted once
    const second = await until(
      () => app.api.buy(sale.productToken, "half-way-2", 1),
      (r) => r.status === 202,
    );
    expect(second.status).toBe(202);
    await app.drain();
    const stats = await until(
      () => app.api.stats(sale.saleId),
      (r) => r.body.awaitingPayment === 2,
    );
    expect(stats.body).toMatchObject({ remaining: 3, awaitingPayment: 2, invariantHolds: true });
  });
});

describe("what rebuilt and kept ledger entries answer and leave behind", () => {
  it("a re-run of an order id after a rebuild is answered as a replay (whole reply, not cut at a missing field)", async () => {
    const sale = await app.api.createSale({ stock: 4, perUserLimit: 2, paymentWindowSeconds: 600 });
    const res = await app.api.buy(sale.productToken, "rerun", 1);
    expect(res.status).toBe(202);
    await app.drain();
    const orderId = String(res.body.orderId);
    expect((await app.api.admin("POST", `/sales/${sale.saleId}/rebuild`)).status).toBe(200);
    // the entry is now the rebuild's (from Postgres); the same attempt is run again (an unknown outcome)
    const reply = await reserve(app.redis, sale.saleId, {
      orderId,
      userId: "rerun",
      quantity: 1,
      now: Date.now(),
    });
    expect(reply.length).toBe(8);
    expect([Number(reply[0]), reply[1], Number(reply[6])]).toEqual([1, orderId, 1]);
    expect(await app.redis.get(saleKeys(sale.saleId).stock)).toBe("3");
  });
});

describe("a rebuild that dies between its script and its follow-up", () => {
  it("does not count an order Postgres already settled as final, even when its queued document outlived it", async () => {
    const stock = 4;
    const sale = await app.api.createSale({ stock, perUserLimit: 2, paymentWindowSeconds: 600 });
    const keys = saleKeys(sale.saleId);
    const res = await app.api.buy(sale.productToken, "settled", 2);
    expect(res.status).toBe(202);
    const orderId = String(res.body.orderId);
    const doc = await until(
      () => app.redis.hget(keys.orders, orderId),
      (d) => d !== null,
    );
    await app.drain();
    // the order is cancelled in Postgres, its restore into Redis failed, and its queued document
    // is still there (its acknowledgement was lost): the rebuild's transaction settles it
    await app.redis.hset(keys.orders, orderId, String(doc));
    await app.redis.zadd(keys.outbox, Date.now(), orderId);
    await app.db.query("update orders set status = 'cancelled', cancelled_at = now() where id = $1", [
      orderId,
    ]);
    await app.db.query("update holdings set units = units - 2 where sale_id = $1 and user_id = 'settled'", [
      sale.saleId,
    ]);
    const meta = await app.redis.hgetall(keys.meta);
    // the script with what the rebuild read (no live order, the cancelled one settled by it) ...
    await rebuild(app.redis, sale.saleId, {
      meta: { ...meta, epoch: String(Number(meta.epoch) + 1) },
      remaining: stock,
      holdings: {},
      ledger: {},
      settled: [orderId],
    });
    // ... and no follow-up (the isolate died): the units must not stay counted for a final order
    expect(await app.redis.get(keys.stock)).toBe(String(stock));
    expect(await app.redis.hget(keys.holdings, "settled")).toBeNull();
    expect(await app.redis.hexists(keys.orders, orderId)).toBe(0);
  });
});
