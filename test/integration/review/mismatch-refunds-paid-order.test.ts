import { describe, expect, it } from "vitest";
import { stripeEvent } from "../../../local/stripe-webhooks";
import { appForFile } from "../../support/app-per-file";
import {
  awaitingOrder,
  checkout,
  orderPaymentRow,
  sessionOf,
  stripeOf,
  waitForOrder,
} from "../../support/payments";
import { shopperToken } from "../../support/shopper";

/*
 * settle() (src/payments/payment-webhook.ts) refunds a payment on the order's own checkout session whose
 * amount or currency differs from the order's before it looks at the order at all: not at its status, not
 * at the payment that paid it. Two signed events of one session that disagree (the commit's own premise:
 * the shop changed CURRENCY between them; a redelivery after a 503, or `async_payment_succeeded` after
 * `completed`) then end in an order that is `paid`, shown paid, announced `order.paid`, while Stripe gave
 * the very payment intent that paid it back. In the other order the refund comes first and the matching
 * event still makes the order paid. The refund is also never recorded on the order (no `refunded`
 * payment, no `order.refunded`), even for an order that expired, which the contract says shows it.
 */
const VARS = { SHOPPER_LIMIT_USER_PER_WINDOW: "1000", RATE_LIMIT_USER_PER_WINDOW: "1000" };
const app = appForFile({ stripe: true, vars: VARS });
const PRICE = 2500;

const orderRow = (orderId: string) => orderPaymentRow(app, orderId);

/** An order awaiting payment with its checkout opened, and that session completed at the stand-in. */
async function paidSession(userId: string, paymentWindowSeconds?: number) {
  const stripe = stripeOf(app);
  const sale = await app.api.createSale({
    priceCents: PRICE,
    stock: 5,
    ...(paymentWindowSeconds ? { paymentWindowSeconds } : {}),
  });
  const { orderId } = await awaitingOrder(app, sale.productToken, userId);
  expect((await checkout(app, orderId, await shopperToken(userId))).status).toBe(200);
  const completed = stripe.pay(sessionOf(stripe, orderId).id, { deliver: false });
  const intent = String(completed.data.object.payment_intent);
  // a second signed event of the same session, in the currency the shop no longer sells in
  const disagreeing = stripeEvent("checkout.session.async_payment_succeeded", {
    ...completed.data.object,
    currency: "eur",
  });
  const refundsOfIntent = () => stripe.refunds().filter((r) => r.payment_intent === intent);
  return { stripe, orderId, completed, disagreeing, intent, refundsOfIntent };
}

describe("a payment on the order's own session that disagrees with the order", () => {
  it("never refunds the payment that already paid the order", async () => {
    const { stripe, orderId, completed, disagreeing, refundsOfIntent } = await paidSession("mp1");
    expect(await stripe.webhooks.sendOnce(completed)).toBe(200);
    await waitForOrder(app, orderId, "mp1", (o) => o.status === "paid");
    expect(await stripe.webhooks.sendOnce(disagreeing)).toBe(200);
    expect(await orderRow(orderId)).toMatchObject({ status: "paid", payment_status: "paid" });
    // the order is paid (goods ship, order.paid went out): its money must not have been given back
    expect(refundsOfIntent()).toEqual([]);
  });

  it("never makes an order paid by a payment it refunded (events reordered)", async () => {
    const { stripe, orderId, completed, disagreeing, refundsOfIntent } = await paidSession("mp2");
    expect(await stripe.webhooks.sendOnce(disagreeing)).toBe(200);
    expect(await stripe.webhooks.sendOnce(completed)).toBe(200);
    const row = await orderRow(orderId);
    const refunds = refundsOfIntent();
    // either the payment is kept and pays the order, or it is given back and the order is not paid
    expect({ status: row.status, refunds: refunds.length }).not.toEqual({ status: "paid", refunds: 1 });
  });

  it("shows the refund on an order that expired, as every late payment's refund is shown", async () => {
    const { stripe, orderId, disagreeing, refundsOfIntent } = await paidSession("mp3", 2);
    await waitForOrder(app, orderId, "mp3", (o) => o.status === "expired");
    expect(await stripe.webhooks.sendOnce(disagreeing)).toBe(200);
    expect(refundsOfIntent()).toHaveLength(1);
    const order = await app.api.order(orderId, "mp3");
    expect(order.body).toMatchObject({ status: "expired", payment: { status: "refunded" } });
  });
});
