import { spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkSale } from "../../../chaos/checker";
import { recordingClient } from "../../../chaos/client";
import { History, type Op } from "../../../chaos/history";
import { CHAOS_VARS } from "../../../chaos/scenario";
import { settle } from "../../../chaos/settle";
import { runWorkload } from "../../../chaos/workload";
import { newOrderId } from "../../../src/ids";
import { saleKeys } from "../../../src/stock/keys";
import { type AppUnderTest, startApp } from "../../support/app";

let app: AppUnderTest;
const root = resolve(import.meta.dirname, "../../..");

beforeAll(async () => {
  app = await startApp({ vars: CHAOS_VARS });
});
afterAll(async () => {
  await app?.stop();
});

/** A settled sale with a known history: three orders, one paid, one cancelled, one left awaiting. */
async function settledSale() {
  const sale = await app.api.createSale({ stock: 6, perUserLimit: 2, paymentWindowSeconds: 600 });
  const history = new History();
  const client = recordingClient(app.worker.url, history);
  const paid = await client.buy(sale.productToken, "a", 2, "a-1");
  const cancelled = await client.buy(sale.productToken, "b", 1, "b-1");
  const open = await client.buy(sale.productToken, "c", 1, "c-1");
  await client.buy(sale.productToken, "c", 2, "c-2");
  await app.drain();
  await client.act("pay", paid.orderId as string, "a");
  await client.act("cancel", cancelled.orderId as string, "b");
  await app.drain();
  return { sale, history, paid, cancelled, open, k: saleKeys(sale.saleId) };
}

const rules = async (saleId: string, ops: Op[]) =>
  [...new Set((await checkSale(app, saleId, ops)).violations.map((v) => v.rule))].sort();

describe("the history checker", () => {
  it("passes a clean concurrent run and counts what it saw", async () => {
    const sale = await app.api.createSale({ stock: 12, perUserLimit: 2, paymentWindowSeconds: 1 });
    const history = new History();
    const client = recordingClient(app.worker.url, history);
    await runWorkload(client, {
      productToken: sale.productToken,
      users: 10,
      durationMs: 2_500,
      concurrency: 4,
      seed: 3,
    });
    await settle(app, sale.saleId, { timeoutMs: 30_000 });
    const result = await checkSale(app, sale.saleId, history.toJSON());
    expect(result.violations).toEqual([]);
    expect(result.figures.acknowledged).toBeGreaterThan(0);
    expect(result.figures.stock).toBe(12);
    expect(result.figures.orders.queued + result.figures.orders.awaiting_payment).toBe(0);
  });

  it("finds a lost acknowledged reservation and a pay answered 200 that did not stick", async () => {
    const { sale, history, cancelled } = await settledSale();
    expect(await rules(sale.saleId, history.toJSON())).toEqual([]);
    const ops = history.toJSON();
    ops.push(
      {
        id: 90,
        kind: "buy",
        via: "api",
        userId: "d",
        quantity: 1,
        orderId: newOrderId(sale.saleId),
        invokedAt: 0,
        outcome: "ok",
        status: 202,
      },
      {
        id: 91,
        kind: "pay",
        via: "api",
        userId: "b",
        orderId: cancelled.orderId as string,
        invokedAt: 0,
        outcome: "ok",
        status: 200,
      },
    );
    expect(await rules(sale.saleId, ops)).toEqual(["answer", "lost"]);
  });

  it("finds stock drift, an order no buy explains and a user over the limit", async () => {
    const { sale, history, k } = await settledSale();
    await app.redis.decrby(k.stock, 1);
    expect(await rules(sale.saleId, history.toJSON())).toEqual(["balance"]);
    await app.redis.incrby(k.stock, 1);
    const extra = newOrderId(sale.saleId);
    await app.db.query(
      `insert into orders (id, sale_id, user_id, quantity, status, created_at, expires_at, paid_at)
       values ($1, $2, 'a', 1, 'paid', now(), now() + interval '1 hour', now())`,
      [extra, sale.saleId],
    );
    const found = await rules(sale.saleId, history.toJSON());
    expect(found).toEqual(expect.arrayContaining(["balance", "duplicate", "limit"]));
  });

  it("fails a user over the limit in either store's holdings, whatever the orders say", async () => {
    const { sale, history, k } = await settledSale();
    const limitDetails = async () =>
      (await checkSale(app, sale.saleId, history.toJSON())).violations
        .filter((v) => v.rule === "limit" && v.userId === "c")
        .map((v) => v.detail);
    expect(await limitDetails()).toEqual([]);
    await app.redis.hset(k.holdings, "c", 3);
    expect(await limitDetails()).toContain("Redis holds 3 units, over the limit 2");
    await app.redis.hset(k.holdings, "c", 1);
    await app.db.query("update holdings set units = 3 where sale_id = $1 and user_id = 'c'", [sale.saleId]);
    expect(await limitDetails()).toContain("Postgres holds 3 units, over the limit 2");
  });

  it("finds a paid order restored, and a cancelled order whose units never came back", async () => {
    const { sale, history, paid, cancelled, k } = await settledSale();
    await app.redis.hset(k.ledger, `x:${paid.orderId}`, JSON.stringify({ type: "restore" }));
    expect(await rules(sale.saleId, history.toJSON())).toContain("paid-restored");
    await app.redis.hdel(k.ledger, `x:${paid.orderId}`);
    await app.db.query("update orders set restored_at = null where id = $1", [cancelled.orderId]);
    expect(await rules(sale.saleId, history.toJSON())).toEqual(["balance", "restore"]);
  });

  it("resolves unknown buys by their Idempotency-Key: one order or none, never a reservation without one", async () => {
    const { sale, history, open, k } = await settledSale();
    const ops = history.toJSON();
    // the client never heard back about c-1, but the key says it reserved, and the order exists: fine
    const c1 = ops.find((op) => op.idempotencyKey === "c-1") as Op;
    Object.assign(c1, { outcome: "unknown", status: undefined, orderId: undefined });
    expect(await rules(sale.saleId, ops)).toEqual([]);
    // an unknown buy whose key says it reserved an order that does not exist
    const ghost = newOrderId(sale.saleId);
    await app.redis.set(k.idempotency("e", "e-1"), JSON.stringify([1, ghost, 1, Date.now(), 0]));
    ops.push({
      id: 99,
      kind: "buy",
      via: "api",
      userId: "e",
      quantity: 1,
      idempotencyKey: "e-1",
      invokedAt: 0,
      outcome: "unknown",
    });
    expect(await rules(sale.saleId, ops)).toEqual(["unknown"]);
    // a refused buy whose key holds a reservation
    const refused = ops.at(-1) as Op;
    Object.assign(refused, { outcome: "failed", status: 410, code: "SOLD_OUT" });
    await app.redis.set(k.idempotency("e", "e-1"), JSON.stringify([1, open.orderId, 1, Date.now(), 0]));
    expect(await rules(sale.saleId, ops)).toEqual(["phantom"]);
  });

  it("a 503 then a retry of its key that reserved is no phantom; a 503 answered after its key reserved is", async () => {
    const { sale, history } = await settledSale();
    const ops = history.toJSON();
    const retry = ops.find((op) => op.idempotencyKey === "c-1") as Op;
    const refused: Op = {
      id: 98,
      kind: "buy",
      via: "api",
      userId: "c",
      quantity: 1,
      idempotencyKey: "c-1",
      invokedAt: retry.invokedAt - 9_000,
      completedAt: retry.invokedAt - 100,
      outcome: "failed",
      status: 503,
      code: "UNAVAILABLE",
    };
    ops.push(refused);
    expect(await rules(sale.saleId, ops)).toEqual([]);
    // answered 503 only after the key's reservation was made: that reservation was its own attempt's
    refused.completedAt = (retry.completedAt as number) + 100;
    expect(await rules(sale.saleId, ops)).toEqual(["phantom"]);
  });

  it("finds a queued order never written and a ledger reservation without its order", async () => {
    const { sale, history, k } = await settledSale();
    const orphan = newOrderId(sale.saleId);
    await app.redis.hset(k.ledger, `r:${orphan}`, JSON.stringify({ userId: "z", quantity: 1 }));
    expect(await rules(sale.saleId, history.toJSON())).toEqual(["ledger"]);
    await app.redis.hset(k.orders, orphan, JSON.stringify({ orderId: orphan, userId: "z", quantity: 1 }));
    await app.redis.hincrby(k.holdings, "z", 1);
    await app.redis.decrby(k.stock, 1);
    expect(await rules(sale.saleId, history.toJSON())).toEqual(["duplicate", "unsettled"]);
  });

  it("runs as a command against a running stack: exit 0 when the invariant holds, 1 with the violations", async () => {
    const { sale, k } = await settledSale();
    const run = () =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(join(root, "node_modules", ".bin", "tsx"), ["chaos/check.ts"], {
          cwd: root,
          env: {
            ...process.env,
            REDIS_URL: app.stack.redis.url,
            DATABASE_URL: app.stack.vars.DATABASE_URL,
            SALE_ID: sale.saleId,
          },
        });
        let out = "";
        child.stdout.on("data", (d) => {
          out += d;
        });
        child.stderr.on("data", (d) => {
          out += d;
        });
        child.on("close", (code) => resolve({ code, out }));
      });
    const clean = await run();
    expect([clean.code, clean.out]).toEqual([0, expect.stringContaining("invariant holds")]);
    await app.redis.incrby(k.stock, 2);
    const broken = await run();
    expect([broken.code, broken.out]).toEqual([1, expect.stringContaining("VIOLATION balance")]);
    await app.redis.decrby(k.stock, 2);
  });
});
