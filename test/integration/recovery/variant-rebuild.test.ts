import { describe, expect, it } from "vitest";
import { newOrderId } from "../../../src/ids";
import { saleKeys } from "../../../src/stock/keys";
import { parseLedgerEntry } from "../../../src/stock/ledger-entry";
import { appForFile } from "../../support/app-per-file";
import { untilRebuilt } from "../../support/recovery";
import { createDrop } from "../../support/variants";

/*
 * A rebuild from Postgres (the operator's, or the recovery after Redis came back empty) gives a drop
 * each variant's units back as Postgres sees them: its stock less its units in live orders, and the
 * holdings per variant from the live orders' lines; the rebuilt sale is still a drop, and a cancel
 * afterwards gives its lines back to their variants. A sale of one variant is rebuilt as before.
 */

const app = appForFile({
  vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", RECOVERY_QUIET_SECONDS: "1", OUTBOX_GRACE_SECONDS: "1" },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const VARIANTS = [
  { variantId: "S", name: "Small", priceCents: 1000, stock: 5 },
  { variantId: "M", name: "Medium", priceCents: 1200, stock: 4, perUserLimit: 3 },
  { variantId: "L", name: "Large", priceCents: 1500, stock: 3 },
];

const newDrop = () => createDrop(app, VARIANTS, { description: "Three sizes", imageUrl: "/images/drop.png" });

type Line = { variantId: string; quantity: number };

/** An order as the order write would have left it in Postgres, with its lines. */
async function orderRow(
  saleId: string,
  userId: string,
  lines: Line[],
  status: "awaiting_payment" | "paid" | "expired" | "cancelled",
  restored = false,
): Promise<string> {
  const id = newOrderId(saleId);
  const items = lines.map((l) => ({
    ...l,
    name: VARIANTS.find((v) => v.variantId === l.variantId)?.name ?? l.variantId,
    priceCents: VARIANTS.find((v) => v.variantId === l.variantId)?.priceCents ?? 0,
  }));
  const quantity = items.reduce((s, l) => s + l.quantity, 0);
  const amount = items.reduce((s, l) => s + l.quantity * l.priceCents, 0);
  await app.db.query(
    `insert into orders (id, sale_id, user_id, quantity, status, created_at, expires_at, paid_at, expired_at,
       cancelled_at, restored_at, items, amount_cents)
     values ($1, $2, $3, $4, $5, now(), now() + interval '10 minutes',
       case when $5 = 'paid' then now() end, case when $5 = 'expired' then now() end,
       case when $5 = 'cancelled' then now() end, case when $6 then now() end, $7::jsonb, $8)`,
    [id, saleId, userId, quantity, status, restored, JSON.stringify(items), amount],
  );
  return id;
}

async function redisState(saleId: string) {
  const k = saleKeys(saleId);
  const nums = (h: Record<string, string>) =>
    Object.fromEntries(Object.entries(h).map(([f, v]) => [f, Number(v)]));
  return {
    stock: Number(await app.redis.get(k.stock)),
    holdings: nums(await app.redis.hgetall(k.holdings)),
    vstock: nums(await app.redis.hgetall(k.variantStock)),
    vholdings: nums(await app.redis.hgetall(k.variantHoldings)),
  };
}

/** The shopper's sale view once it shows `remaining` per variant (its list is refreshed in the background). */
async function variantsShown(saleId: string, want: Record<string, number>) {
  const deadline = Date.now() + 15_000;
  let shown: Record<string, number> = {};
  while (Date.now() < deadline) {
    const body = (await app.api.call("GET", `/api/sales/${saleId}`)).body as {
      variants?: { variantId: string; remaining: number }[];
    };
    shown = Object.fromEntries((body.variants ?? []).map((v) => [v.variantId, v.remaining]));
    if (JSON.stringify(shown) === JSON.stringify(want)) break;
    await sleep(200);
  }
  return shown;
}

describe("operator rebuild of a drop from Postgres", () => {
  it("gives each variant its stock less its live units, holdings per variant, and keeps the drop a drop", async () => {
    const sale = await newDrop();
    const ana = await orderRow(
      sale.saleId,
      "ana",
      [
        { variantId: "S", quantity: 2 },
        { variantId: "L", quantity: 1 },
      ],
      "awaiting_payment",
    );
    await orderRow(sale.saleId, "bo", [{ variantId: "M", quantity: 3 }], "paid");
    const expired = await orderRow(sale.saleId, "cy", [{ variantId: "S", quantity: 1 }], "expired");
    await orderRow(sale.saleId, "dee", [{ variantId: "L", quantity: 2 }], "cancelled", true);

    const rebuilt = await app.api.admin("POST", `/sales/${sale.saleId}/rebuild`);
    expect(rebuilt.status).toBe(200);
    expect(rebuilt.body).toMatchObject({ stock: 12, liveOrders: 2, liveUnits: 6, remaining: 6 });
    expect(await redisState(sale.saleId)).toEqual({
      stock: 6,
      holdings: { ana: 3, bo: 3 },
      vstock: { S: 3, M: 1, L: 2 },
      vholdings: { "S:ana": 2, "L:ana": 1, "M:bo": 3 },
    });
    const k = saleKeys(sale.saleId);
    const meta = await app.redis.hgetall(k.meta);
    expect(JSON.parse(String(meta.variants))).toEqual(VARIANTS.map(({ stock: _, ...v }) => v));
    expect(meta).toMatchObject({ description: "Three sizes", imageUrl: "/images/drop.png" });
    expect(parseLedgerEntry(await app.redis.hget(k.ledger, `r:${ana}`))).toMatchObject({
      rebuilt: true,
      items: [
        { variantId: "S", quantity: 2, priceCents: 1000 },
        { variantId: "L", quantity: 1, priceCents: 1500 },
      ],
    });
    // the expired order the rebuild settled is not given back a second time
    expect(
      (await app.db.query("select restored_at from orders where id = $1", [expired])).rows[0]?.restored_at,
    ).not.toBeNull();
    expect(await variantsShown(sale.saleId, { S: 3, M: 1, L: 2 })).toEqual({ S: 3, M: 1, L: 2 });

    // a cancel after the rebuild gives the order's lines back to their variants, once
    expect((await app.api.order(ana, "ana", "cancel")).status).toBe(200);
    expect((await app.api.order(ana, "ana", "cancel")).status).toBeLessThan(500);
    expect(await redisState(sale.saleId)).toEqual({
      stock: 9,
      holdings: { bo: 3 },
      vstock: { S: 5, M: 1, L: 3 },
      vholdings: { "M:bo": 3 },
    });
  });
});

describe("Redis restarted empty: the recovery rebuilds a drop per variant, a sale of one as before", () => {
  it("rebuilds both from Postgres", async () => {
    const drop = await newDrop();
    const one = await app.api.createSale({ stock: 8, perUserLimit: 4 });
    await orderRow(
      drop.saleId,
      "eve",
      [
        { variantId: "M", quantity: 2 },
        { variantId: "S", quantity: 1 },
      ],
      "paid",
    );
    await orderRow(drop.saleId, "fay", [{ variantId: "L", quantity: 3 }], "awaiting_payment");
    await orderRow(drop.saleId, "gus", [{ variantId: "S", quantity: 4 }], "cancelled", true);
    const oneOrder = await orderRow(
      one.saleId,
      "hal",
      [{ variantId: "default", quantity: 3 }],
      "awaiting_payment",
    );

    await app.stack.redis.restart({ empty: true });
    await app.reconnect();
    await untilRebuilt(app, drop.saleId);

    expect(await redisState(drop.saleId)).toEqual({
      stock: 6,
      holdings: { eve: 3, fay: 3 },
      vstock: { S: 4, M: 2, L: 0 },
      vholdings: { "M:eve": 2, "S:eve": 1, "L:fay": 3 },
    });
    expect(await redisState(one.saleId)).toEqual({
      stock: 5,
      holdings: { hal: 3 },
      vstock: {},
      vholdings: {},
    });
    const oneMeta = await app.redis.hgetall(saleKeys(one.saleId).meta);
    expect(JSON.parse(String(oneMeta.variants))).toEqual([
      { variantId: "default", name: "Test tickets", priceCents: 4900 },
    ]);
    // the sale of one: its cancel restores as before
    expect((await app.api.order(oneOrder, "hal", "cancel")).status).toBe(200);
    expect(await redisState(one.saleId)).toEqual({ stock: 8, holdings: {}, vstock: {}, vholdings: {} });
  });
});
