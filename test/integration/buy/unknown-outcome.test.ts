import { describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { reserve } from "../../support/lua";

const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", CATALOG_REFRESH_MS: "600000" } });

async function eventually<T>(call: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await call();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("a reservation whose outcome is unknown is resolved before the answer", () => {
  it("a script that commits after the store's timeout is answered 202 and published, not 503", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    await app.api.buy(sale.productToken, "warm-up", 1);
    // Writes (and scripts) wait 3 s; the REST stand-in's fault mode answers 503 after 1.5 s (before the
    // client's own 2 s timeout), then the script commits: a timeout after commit.
    app.stack.upstash.setFaults({ replyTimeoutMs: 1_500 });
    await app.redis.call("CLIENT", "PAUSE", "3000", "WRITE");
    const res = await app.api
      .buy(sale.productToken, "slow-commit", 1)
      .finally(() => app.stack.upstash.setFaults({ replyTimeoutMs: null }));
    const ledger = await eventually(
      () => app.redis.hkeys(saleKeys(sale.saleId).ledger),
      (keys) => keys.length === 2,
    );
    expect(ledger.length, "the paused script committed").toBe(2);
    expect(res.status, res.text).toBe(202);
    expect(ledger).toContain(`r:${String(res.body.orderId)}`);
    const order = await eventually(
      () => app.api.order(String(res.body.orderId), "slow-commit"),
      (r) => r.body.status === "awaiting_payment",
    );
    expect(order.body).toMatchObject({ status: "awaiting_payment", quantity: 1 });
  });

  it("a keyed retry that finds its reservation unpublished publishes it", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    // a reservation whose 202 and publish were lost (e.g. the isolate died right after the script)
    const orderId = `${sale.saleId}-${"p".repeat(20)}`;
    const first = await reserve(app.redis, sale.saleId, {
      orderId,
      userId: "retrier",
      quantity: 1,
      now: Date.now(),
      idem: "click-lost",
    });
    expect(first[0]).toBe(1);
    const retry = await app.api.buy(sale.productToken, "retrier", 1, { "Idempotency-Key": "click-lost" });
    expect([retry.status, retry.body.orderId]).toEqual([202, orderId]);
    const order = await eventually(
      () => app.api.order(orderId, "retrier"),
      (r) => r.body.status === "awaiting_payment",
    );
    expect(order.body).toMatchObject({ status: "awaiting_payment" });
  });
});
