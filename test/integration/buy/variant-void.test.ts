import { describe, expect, it } from "vitest";
import { newOrderId } from "../../../src/ids";
import { saleKeys } from "../../../src/stock/keys";
import { reserveScriptCall } from "../../../src/stock/reserve-call";
import { appForFile } from "../../support/app-per-file";
import { deliverJob } from "../../support/jobs";
import { lua } from "../../support/lua";
import { createDrop } from "../../support/variants";

/*
 * A drop's cart whose buy was given up (its outcome unknown): the void job gives each line back to its
 * variant, once however often it is delivered, and records the order in Postgres as cancelled and
 * restored, with its lines.
 */

const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", CATALOG_REFRESH_MS: "600000" } });

const VARIANTS = [
  { variantId: "S", name: "Small", priceCents: 1000, stock: 5 },
  { variantId: "M", name: "Medium", priceCents: 1200, stock: 4 },
  { variantId: "L", name: "Large", priceCents: 1500, stock: 3 },
];

async function variantState(saleId: string) {
  const k = saleKeys(saleId);
  return {
    stock: await app.redis.get(k.stock),
    holdings: await app.redis.hgetall(k.holdings),
    vstock: await app.redis.hgetall(k.variantStock),
    vholdings: await app.redis.hgetall(k.variantHoldings),
    queued: await app.redis.hkeys(k.orders),
  };
}

describe("the void of a drop's cart", () => {
  it("gives each line back to its variant once and records the cancelled order with its lines", async () => {
    const sale = await createDrop(app, VARIANTS);
    const before = await variantState(sale.saleId);
    expect(before.vstock).toEqual({ S: "5", M: "4", L: "3" });
    const orderId = newOrderId(sale.saleId);
    const lines = [
      { variantId: "M", quantity: 2, priceCents: 1200, cap: 0 },
      { variantId: "S", quantity: 1, priceCents: 1000, cap: 0 },
    ];
    const { keys, args } = reserveScriptCall(
      {
        saleId: sale.saleId,
        orderId,
        userId: "given-up",
        ip: "127.0.0.1",
        quantity: 3,
        idempotencyKey: null,
        now: Date.now(),
        lines,
        perVariant: true,
      },
      { userPerWindow: 1000, ipPerWindow: 1_000_000, windowMs: 1000 },
    );
    const reply = (await app.redis.eval(lua("reserve-stock"), keys.length, ...keys, ...args)) as unknown[];
    expect(reply[0]).toBe(1);
    expect((await variantState(sale.saleId)).vstock).toEqual({ S: "4", M: "2", L: "3" });

    const job = { saleId: sale.saleId, orderId, userId: "given-up", quantity: 3, idempotencyKey: null };
    const runs = await Promise.all([1, 2, 3].map(() => deliverJob(app, "/api/jobs/void-reservation", job)));
    for (const run of runs) expect(run.status, run.text).toBe(200);
    expect((await deliverJob(app, "/api/jobs/void-reservation", job)).status).toBe(200);

    expect(await variantState(sale.saleId)).toEqual(before);
    const { rows } = await app.db.query<{
      status: string;
      restored: boolean;
      items: unknown;
      amount_cents: number;
    }>(
      "select status, restored_at is not null as restored, items, amount_cents::int as amount_cents from orders where id = $1",
      [orderId],
    );
    expect(rows).toEqual([
      {
        status: "cancelled",
        restored: true,
        items: [
          { variantId: "M", name: "Medium", quantity: 2, priceCents: 1200 },
          { variantId: "S", name: "Small", quantity: 1, priceCents: 1000 },
        ],
        amount_cents: 3400,
      },
    ]);
  });
});
