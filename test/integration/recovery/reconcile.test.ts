import { describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";

/** The operator's reconciliation of Redis against Postgres: what it reports, pauses and republishes. */
const app = appForFile({
  vars: {
    RATE_LIMIT_USER_PER_WINDOW: "1000",
    RATE_LIMIT_IP_PER_WINDOW: "100000",
    OUTBOX_GRACE_SECONDS: "1",
    LEDGER_TRIM_AFTER_SECONDS: "0",
  },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("reconciliation", () => {
  it("reports drift and pauses the sale instead of overwriting either side", async () => {
    const sale = await app.api.createSale({ stock: 10 });
    await app.api.buy(sale.productToken, "r1", 2);
    await app.drain();
    await app.redis.incrby(saleKeys(sale.saleId).stock, 3);
    const report = await app.api.admin("POST", `/sales/${sale.saleId}/reconcile`);
    expect(report.body).toMatchObject({ drift: -3, paused: true });
    expect((await app.api.buy(sale.productToken, "r2", 1)).body).toMatchObject({
      error: { code: "SALE_PAUSED" },
    });
    expect(await app.redis.get(saleKeys(sale.saleId).stock)).toBe("11");
  });

  it("republishes a reservation whose order never reached Postgres", async () => {
    const sale = await app.api.createSale({ stock: 10 });
    app.stack.qstash.pause();
    let orderId = "";
    try {
      orderId = String((await app.api.buy(sale.productToken, "lost", 1)).body.orderId);
      await sleep(1100);
    } finally {
      // the queued message is lost for good
      for (const id of app.stack.qstash.scheduler.messageIds()) app.stack.qstash.scheduler.cancel(id);
      app.stack.qstash.resume();
    }
    await app.redis.hdel(saleKeys(sale.saleId).orders, orderId);
    await app.redis.zrem(saleKeys(sale.saleId).outbox, orderId);
    const report = await app.api.admin("POST", `/sales/${sale.saleId}/reconcile`);
    expect(report.body).toMatchObject({ republished: [orderId], drift: 0, paused: false });
    await app.drain();
    expect((await app.api.order(orderId, "lost")).body.status).toBe("awaiting_payment");
  });
});
