import { describe, expect, it } from "vitest";
import { newOrderId } from "../../../src/ids";
import { saleKeys } from "../../../src/stock/keys";
import { reserveScriptCall } from "../../../src/stock/reserve-call";
import { appForFile } from "../../support/app-per-file";
import { deliverJob } from "../../support/jobs";
import { lua } from "../../support/lua";
import { reservedEntry } from "../../support/reserved-entry";
import { createDrop } from "../../support/variants";

/*
 * attemptPurchase reads a sale's variants (variantsOf) before the one script runs. For a sale Redis does not
 * hold yet it answers [] unremembered, and checkCart then passes a bare quantity through with no lines and
 * perVariant false. If a recovery writes the sale back between that read and the EVALSHA (a process that
 * lost its Redis, many shoppers at once), the script reserves units of a drop with no lines: it never
 * checks the meta's variants against ARGV[14]. Such an order (no items) on a drop is refused by the
 * order write's NOT NULL items (the trigger fills only a sale of one), and takes the rest of its batch with it.
 */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" } });

/** A live drop of two sizes, three units each, five per shopper. */
const smallDrop = () =>
  createDrop(
    app,
    [
      { variantId: "S", name: "Small", priceCents: 1000, stock: 3 },
      { variantId: "M", name: "Medium", priceCents: 1200, stock: 3 },
    ],
    { perUserLimit: 5 },
  );

describe("a drop's reservation without lines", () => {
  it("is refused by the script (the meta says several variants)", async () => {
    const sale = await smallDrop();
    const orderId = newOrderId(sale.saleId);
    // what attempt.ts sends after variantsOf answered [] (the sale not yet back in Redis)
    const { keys, args } = reserveScriptCall(
      {
        saleId: sale.saleId,
        orderId,
        userId: "raced",
        ip: "127.0.0.1",
        quantity: 2,
        idempotencyKey: null,
        now: Date.now(),
        lines: [],
        perVariant: false,
      },
      { userPerWindow: 1000, ipPerWindow: 1_000_000, windowMs: 1000 },
    );
    const reply = (await app.redis.eval(lua("reserve-stock"), keys.length, ...keys, ...args)) as unknown[];
    expect(reply[0]).not.toBe(1);
    // had it reserved: stock 4, variants still 3 + 3
    expect(await app.redis.get(saleKeys(sale.saleId).stock)).toBe("6");
  });

  it("does not keep another sale's order out of the same order-write batch", async () => {
    const sale = await smallDrop();
    const other = await app.api.createSale({ stock: 5 });
    const now = Date.now();
    const lineless = {
      orderId: newOrderId(sale.saleId),
      saleId: sale.saleId,
      userId: "raced",
      quantity: 2,
      createdAt: now,
      expiresAt: now + 600_000,
      epoch: 1,
    };
    const good = await reservedEntry(app, other.saleId, "good", 1);
    const res = await deliverJob(app, "/api/jobs/order-write", { orders: [lineless, good] });
    const { rows } = await app.db.query("select id from orders where sale_id = $1", [other.saleId]);
    expect(rows.map((r) => r.id)).toEqual([good.orderId]);
    expect(res.status).toBe(200);
  });
});
