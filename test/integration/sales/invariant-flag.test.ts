import { describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { restore } from "../../support/lua";

const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" } });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the invariant flag on a healthy sale", () => {
  it("holds while a restore is half-way: units back in Redis, Postgres not yet told", async () => {
    const sale = await app.api.createSale({ stock: 10, perUserLimit: 2 });
    const bought = await app.api.buy(sale.productToken, "halfway", 2);
    expect(bought.status).toBe(202);
    await app.drain();
    const orderId = String(bought.body.orderId);
    // the timeout job's first half: Postgres decided the order expired (holdings released) ...
    await app.db.query("update orders set status = 'expired' where id = $1 and status = 'awaiting_payment'", [
      orderId,
    ]);
    await app.db.query("update holdings set units = units - 2 where sale_id = $1 and user_id = 'halfway'", [
      sale.saleId,
    ]);
    // ... and restore-stock.lua gave the units back; the isolate died before markRestored
    expect(
      (
        await restore(app.redis, sale.saleId, { orderId, userId: "halfway", quantity: 2, now: Date.now() })
      )[0],
    ).toBe(1);
    expect(await app.redis.get(saleKeys(sale.saleId).stock)).toBe("10");
    const stats = (await app.api.stats(sale.saleId)).body;
    expect(stats, JSON.stringify(stats)).toMatchObject({ remaining: 10, invariantHolds: true });
  });

  it("never reads false while a burst is bought, paid, cancelled and timed out", async () => {
    const sale = await app.api.createSale({ stock: 400, perUserLimit: 2, paymentWindowSeconds: 2 });
    const falses: unknown[] = [];
    let polling = true;
    let polls = 0;
    const poller = (async () => {
      while (polling) {
        const res = await app.api.stats(sale.saleId);
        polls++;
        if (res.status === 200 && res.body.invariantHolds !== true) falses.push(res.body);
      }
    })();
    const shopper = async (i: number) => {
      const user = `load-${i}`;
      for (let round = 0; round < 3; round++) {
        const res = await app.api.buy(sale.productToken, user, 1);
        if (res.status !== 202) continue;
        const orderId = String(res.body.orderId);
        const fate = (i + round) % 3;
        if (fate === 0) await app.api.order(orderId, user, "cancel");
        if (fate === 1) {
          for (let t = 0; t < 20; t++) {
            const paid = await app.api.order(orderId, user, "pay");
            if (
              paid.status !== 409 ||
              (paid.body.error as { code?: string } | undefined)?.code !== "ORDER_NOT_READY"
            )
              break;
            await sleep(100);
          }
        }
        // fate 2: left to its payment timeout
      }
    };
    await Promise.all(Array.from({ length: 60 }, (_, i) => shopper(i)));
    await app.drain(30_000);
    await sleep(3_000);
    await app.drain(30_000);
    polling = false;
    await poller;
    expect(polls).toBeGreaterThan(5);
    expect(falses, JSON.stringify(falses.slice(0, 3))).toEqual([]);
    const final = await app.api.stats(sale.saleId);
    expect(final.body.invariantHolds).toBe(true);
  }, 120_000);
});
