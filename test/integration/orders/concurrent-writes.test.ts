/**
 * Order writes racing each other on a real Postgres: QStash delivers at least once, the sweeper and the
 * reconciliation republish, so the same orders arrive in several batches at once, in any order. Every
 * order must be written once, every holding counted once, and no batch may fail (a deadlock aborts a
 * whole batch: QStash retries it, but the orders wait and the drain slows down).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../../local/migrate";
import { type PostgresProcess, startPostgres } from "../../../local/postgres-process";
import { insertSale } from "../../../src/catalog/sale-repository";
import { newOrderId, newSaleId } from "../../../src/ids";
import { writeOrders } from "../../../src/orders/order-writes";
import type { QueuedOrder } from "../../../src/stock/queued-order";
import { connectPostgresTcp, type PostgresTcpStore } from "../../../src/stores/postgres-tcp";

let dir: string;
let postgres: PostgresProcess;
let db: PostgresTcpStore;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flashsale-order-writes-"));
  postgres = await startPostgres({ port: 0, dir, durable: false });
  await migrate(postgres.databaseUrl);
  db = connectPostgresTcp(postgres.databaseUrl, { max: 16 });
}, 60_000);

afterAll(async () => {
  await db?.close();
  await postgres?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function shuffled<T>(list: T[]): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

async function newSale(): Promise<string> {
  const saleId = newSaleId();
  const now = Date.now();
  await insertSale(db, {
    saleId,
    productId: `sku-${saleId}`,
    name: "Race tickets",
    priceCents: 100,
    perUserLimit: 10,
    startsAt: now - 1000,
    endsAt: now + 3_600_000,
    paused: false,
    paymentWindowMs: 600_000,
    stock: 1000,
    initialStock: 1000,
    productToken: saleId.padEnd(43, "x"),
  });
  return saleId;
}

describe("writeOrders under concurrent, duplicated, reordered batches", () => {
  it("writes every order once and counts every holding once, without a failed batch", async () => {
    const sales = [await newSale(), await newSale()];
    const now = Date.now();
    const orders: QueuedOrder[] = Array.from({ length: 60 }, (_, i) => {
      const saleId = sales[i % 2] as string;
      return {
        orderId: newOrderId(saleId),
        saleId,
        userId: `user-${i % 12}`,
        quantity: 1 + (i % 3),
        createdAt: now,
        expiresAt: now + 600_000,
        epoch: 1,
      };
    });
    for (let round = 0; round < 4; round++) {
      const batches = Array.from({ length: 16 }, () => shuffled(orders).slice(0, 50));
      const results = await Promise.allSettled(batches.map((batch) => writeOrders(db, batch)));
      const failed = results.filter((r) => r.status === "rejected");
      expect(failed.map((r) => String((r as PromiseRejectedResult).reason?.cause ?? ""))).toEqual([]);
      // every batch reports every one of its orders written (by itself or by a batch racing it)
      for (const [i, r] of results.entries()) {
        const written = r.status === "fulfilled" ? r.value.written : new Map();
        expect((batches[i] ?? []).filter((o) => !written.has(o.orderId))).toEqual([]);
      }
    }
    await writeOrders(db, orders);
    const written = await db.execute<{ n: number }>(
      sql`select count(*)::int as n from orders where sale_id in (${sales[0]}, ${sales[1]})`,
    );
    expect(written.rows[0]?.n).toBe(60);
    const held = await db.execute<{ sale_id: string; user_id: string; units: number }>(
      sql`select sale_id, user_id, units from holdings where sale_id in (${sales[0]}, ${sales[1]})`,
    );
    const expected = new Map<string, number>();
    for (const o of orders)
      expected.set(`${o.saleId}/${o.userId}`, (expected.get(`${o.saleId}/${o.userId}`) ?? 0) + o.quantity);
    expect(new Map(held.rows.map((r) => [`${r.sale_id}/${r.user_id}`, Number(r.units)]))).toEqual(expected);
  });

  it("reports an order written by a batch that committed while it waited, not as unwritable", async () => {
    // the statement's own snapshot cannot see a row another transaction committed after it began: the
    // insert waits for that transaction, finds the conflict, and the read of the row in the same
    // statement finds nothing (under load this answered a duplicate delivery 400 "no sale")
    const saleId = await newSale();
    const now = Date.now();
    const order: QueuedOrder = {
      orderId: newOrderId(saleId),
      saleId,
      userId: "user-late",
      quantity: 2,
      createdAt: now,
      expiresAt: now + 600_000,
      epoch: 1,
    };
    const other = new pg.Client({ connectionString: postgres.databaseUrl });
    await other.connect();
    try {
      await other.query("begin");
      await other.query(
        `insert into orders (id, sale_id, user_id, quantity, status, created_at, expires_at, epoch)
         values ($1, $2, $3, $4, 'awaiting_payment', now(), now() + interval '10 minutes', 1)`,
        [order.orderId, saleId, order.userId, order.quantity],
      );
      const racing = writeOrders(db, [order]);
      // the racing statement is waiting on the row lock when the other transaction commits
      await waitForLockWait();
      await other.query("commit");
      const { written } = await racing;
      expect(written.get(order.orderId)).toMatchObject({ inserted: false, status: "awaiting_payment" });
    } finally {
      await other.end();
    }
  });
});

async function waitForLockWait(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await db.execute<{ n: number }>(
      sql`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock'`,
    );
    if ((rows[0]?.n ?? 0) > 0) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("the racing write never waited on the row lock");
}
