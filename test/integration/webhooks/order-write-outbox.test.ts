/**
 * The order write's outbox rows on a real Postgres, with endpoints subscribed to different events: one
 * row per event and endpoint that takes it, each event's message built once and the same for every
 * endpoint, none for an order the write did not insert, and what the statement hands back is what the
 * table holds, in order (order, version, endpoint).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
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
  dir = await mkdtemp(join(tmpdir(), "flashsale-outbox-"));
  postgres = await startPostgres({ port: 0, dir, durable: false });
  await migrate(postgres.databaseUrl);
  db = connectPostgresTcp(postgres.databaseUrl, { max: 4 });
}, 60_000);

afterAll(async () => {
  await db?.close();
  await postgres?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
type Row = {
  id: number;
  endpoint_id: string;
  msg_id: string;
  event: { type: string; data: Record<string, unknown> };
};

describe("the order write's outbox", () => {
  it("writes one row per event and endpoint taking it, each message the same for every endpoint", async () => {
    const saleId = newSaleId();
    const now = Date.now();
    await insertSale(db, {
      saleId,
      productId: `sku-${saleId}`,
      name: "Outbox",
      priceCents: 250,
      perUserLimit: 5,
      startsAt: now - 1000,
      endsAt: now + 3_600_000,
      paused: false,
      paymentWindowMs: 600_000,
      stock: 100,
      initialStock: 100,
      productToken: saleId.padEnd(43, "x"),
    });
    // three endpoints: both events, only reserved, only paid (none of the write's)
    for (const [id, events] of [
      ["we-both", ["order.reserved", "order.awaiting_payment"]],
      ["we-reserved", ["order.reserved"]],
      ["we-paid", ["order.paid"]],
    ] as const)
      await db.execute(
        sql`insert into webhook_endpoints (id, url, events, secret) values (${id}, ${`http://127.0.0.1:9/${id}`}, ${JSON.stringify(events)}::jsonb, ${SECRET})`,
      );
    const order = (i: number): QueuedOrder => ({
      orderId: newOrderId(saleId),
      saleId,
      userId: `user-${i}`,
      quantity: 1 + (i % 2),
      createdAt: now,
      expiresAt: now + 600_000,
      epoch: 1,
      items: [{ variantId: "default", quantity: 1 + (i % 2), priceCents: 250 }],
    });
    const first = Array.from({ length: 5 }, (_, i) => order(i));
    const { webhooks } = await writeOrders(db, first);
    // a replay of two of them and three new ones: rows for the new ones only
    const second = [...first.slice(0, 2), ...Array.from({ length: 3 }, (_, i) => order(10 + i))];
    const again = await writeOrders(db, second);

    const { rows } = await db.execute<Row>(
      sql`select id, endpoint_id, msg_id, event from webhook_outbox order by id`,
    );
    const inserted = [...first, ...second.slice(2)].map((o) => o.orderId);
    const expected = inserted.flatMap((orderId) => [
      { endpoint: "we-both", msg: `msg_${orderId}_1`, type: "order.reserved" },
      { endpoint: "we-reserved", msg: `msg_${orderId}_1`, type: "order.reserved" },
      { endpoint: "we-both", msg: `msg_${orderId}_2`, type: "order.awaiting_payment" },
    ]);
    // in each write, by order id, then version, then endpoint
    const sorted = (ids: string[]) => [...ids].sort();
    const inOrder = [
      ...sorted(first.map((o) => o.orderId)),
      ...sorted(second.slice(2).map((o) => o.orderId)),
    ];
    expect(rows.map((r) => ({ endpoint: r.endpoint_id, msg: r.msg_id, type: r.event.type }))).toEqual(
      inOrder.flatMap((id) => expected.filter((e) => e.msg.startsWith(`msg_${id}_`))),
    );
    // one message per event: the same payload for every endpoint that takes it
    for (const msgId of new Set(rows.map((r) => r.msg_id))) {
      const payloads = rows.filter((r) => r.msg_id === msgId).map((r) => JSON.stringify(r.event));
      expect(new Set(payloads).size).toBe(1);
    }
    const some = rows.find((r) => r.event.type === "order.awaiting_payment");
    expect(some?.event.data).toMatchObject({
      status: "awaiting_payment",
      version: 2,
      amountCents: expect.any(Number),
    });
    expect(some?.event.data).not.toHaveProperty("payment");
    // what each write handed back is what it wrote
    const handed = [...webhooks, ...again.webhooks].map((w) => ({
      id: w.id,
      endpointId: w.endpointId,
      msgId: w.msgId,
    }));
    expect(handed).toEqual(
      rows.map((r) => ({ id: Number(r.id), endpointId: r.endpoint_id, msgId: r.msg_id })),
    );
  });
});
