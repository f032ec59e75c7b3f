import { describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { awaitingOrder, checkout, orderPaymentRow, sessionOf, stripeOf } from "../../support/payments";
import { shopperToken } from "../../support/shopper";

/**
 * The Stripe checkout of an order that expired is closed, whichever way the order expired. Its own
 * file: it waits out the sweep's 15 s while the other payment tests run.
 */
const VARS = { SHOPPER_LIMIT_USER_PER_WINDOW: "1000", RATE_LIMIT_USER_PER_WINDOW: "1000" };
const app = appForFile({ stripe: true, vars: VARS });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PRICE = 2500;

const orderRow = (orderId: string) => orderPaymentRow(app, orderId);

describe("closing the checkouts of orders that expired", () => {
  it("closes the Stripe session whichever way the order expired (the checkout route, the sweep)", async () => {
    const stripe = stripeOf(app);
    // 5 s: both checkouts must open before the window closes, on a busy machine too (1 s was not enough)
    const sale = await app.api.createSale({ priceCents: PRICE, stock: 5, paymentWindowSeconds: 5 });
    const byCheckout = await awaitingOrder(app, sale.productToken, "k1");
    const bySweep = await awaitingOrder(app, sale.productToken, "k2");
    for (const [o, user] of [
      [byCheckout, "k1"],
      [bySweep, "k2"],
    ] as const) {
      expect((await checkout(app, o.orderId, await shopperToken(user))).status).toBe(200);
    }
    // the payment-timeout jobs are late (QStash holds its deliveries): other paths expire the orders
    app.stack.qstash.pause();
    try {
      await sleep(Math.max(0, bySweep.expiresAt - Date.now()) + 200);
      const again = await checkout(app, byCheckout.orderId, await shopperToken("k1"));
      expect((again.body.error as { code: string }).code).toBe("ORDER_EXPIRED");
      // the sweep expires orders whose window closed more than 15 s ago
      await sleep(Math.max(0, bySweep.expiresAt + 15_500 - Date.now()));
      await app.worker.scheduled();
      expect((await orderRow(bySweep.orderId)).status).toBe("expired");
      const deadline = Date.now() + 10_000;
      const open = () =>
        [byCheckout, bySweep]
          .filter((o) => sessionOf(stripe, o.orderId).status === "open")
          .map((o) => o.orderId);
      while (open().length > 0 && Date.now() < deadline) await sleep(100);
      expect(open()).toEqual([]);
    } finally {
      app.stack.qstash.resume();
    }
  }, 60_000);
});
