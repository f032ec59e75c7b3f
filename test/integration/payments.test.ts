import { describe, expect, it } from "vitest";
import { publicSession } from "../../local/stripe-server";
import { signPayload, stripeEvent } from "../../local/stripe-webhooks";
import { appForFile } from "../support/app-per-file";
import {
  alteredEvent,
  awaitingOrder,
  checkout,
  sessionOf,
  stripeOf,
  waitForOrder,
} from "../support/payments";
import { shopperToken } from "../support/shopper";

const app = appForFile({
  stripe: true,
  vars: { SHOPPER_LIMIT_USER_PER_WINDOW: "1000", RATE_LIMIT_USER_PER_WINDOW: "1000" },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PRICE = 2500;

/** The webhook, posted by the test itself (forged or replayed deliveries). */
async function postWebhook(body: string, signature: string | null) {
  return app.api.call("POST", "/api/payments/stripe/webhook", {
    rawBody: body,
    headers: { "Content-Type": "application/json", ...(signature ? { "Stripe-Signature": signature } : {}) },
  });
}

async function orderRow(orderId: string) {
  const { rows } = await app.db.query(
    "select status, paid_at, payment_status, payment_ref, refund_ref from orders where id = $1",
    [orderId],
  );
  return rows[0] as Record<string, unknown>;
}

describe("payments through Stripe (the local stand-in)", () => {
  it("opens one checkout under concurrent retries, for price × quantity, and refuses the shopper's own pay", async () => {
    const stripe = stripeOf(app);
    const sale = await app.api.createSale({ priceCents: PRICE, stock: 20, perUserLimit: 5 });
    const { orderId } = await awaitingOrder(app, sale.productToken, "c1", 3);
    const token = await shopperToken("c1");
    const answers = await Promise.all(Array.from({ length: 8 }, () => checkout(app, orderId, token)));
    for (const res of answers) expect(res.status, res.text).toBe(200);
    const urls = new Set(answers.map((r) => r.body.url));
    expect(urls.size).toBe(1);
    expect(answers[0]?.body).toMatchObject({ orderId, provider: "stripe" });
    const session = sessionOf(stripe, orderId);
    expect(session).toMatchObject({ amount_total: PRICE * 3, currency: "usd", metadata: { orderId } });
    expect(session.url).toBe(answers[0]?.body.url);
    expect((await checkout(app, orderId, token)).body.url).toBe(session.url);

    const order = await app.api.order(orderId, "c1");
    expect(order.body.payment).toEqual({
      provider: "stripe",
      status: "pending",
      amountCents: PRICE * 3,
      currency: "usd",
    });
    const pay = await app.api.order(orderId, "c1", "pay");
    expect(pay.status).toBe(409);
    expect((pay.body.error as { code: string }).code).toBe("CHECKOUT_REQUIRED");
    expect((await orderRow(orderId)).status).toBe("awaiting_payment");

    expect((await checkout(app, orderId, await shopperToken("someone-else"))).status).toBe(404);
    expect((await checkout(app, `${sale.saleId}-nope`, token)).status).toBe(404);
  });

  it("pays on the signed webhook once: forged refused, duplicated and reordered change nothing", async () => {
    const stripe = stripeOf(app);
    const sale = await app.api.createSale({ priceCents: PRICE, stock: 20 });
    const { orderId } = await awaitingOrder(app, sale.productToken, "w1");
    const token = await shopperToken("w1");
    expect((await checkout(app, orderId, token)).status).toBe(200);
    const event = stripe.pay(sessionOf(stripe, orderId).id, { deliver: false });
    const body = JSON.stringify(event);
    const now = Math.floor(Date.now() / 1000);

    const forged = [
      await postWebhook(body, null),
      await postWebhook(body, signPayload(body, "whsec_not_the_secret", now)),
      await postWebhook(
        body.replace(`"amount_total":${PRICE}`, '"amount_total":1'),
        signPayload(body, "x", now),
      ),
      await postWebhook(`${body} `, stripeSignatureOf(body, now)),
      await postWebhook(body, stripeSignatureOf(body, now - 3600)),
    ];
    for (const res of forged) {
      expect(res.status, res.text).toBe(400);
      expect((res.body.error as { code: string }).code).toBe("INVALID_REQUEST");
    }
    expect((await orderRow(orderId)).status).toBe("awaiting_payment");

    // an event about the session arriving before the payment's (reordered) is seen and changes nothing
    const early = stripeEvent("checkout.session.expired", {
      ...publicSession(sessionOf(stripe, orderId)),
      status: "expired",
    });
    expect(await stripe.webhooks.sendOnce(early)).toBe(200);
    expect((await orderRow(orderId)).status).toBe("awaiting_payment");

    const first = await Promise.all([stripe.webhooks.sendOnce(event), stripe.webhooks.sendOnce(event)]);
    expect(first).toEqual([200, 200]);
    const paid = await orderRow(orderId);
    expect(paid).toMatchObject({
      status: "paid",
      payment_status: "paid",
      payment_ref: event.data.object.payment_intent,
    });
    const again = stripeEvent("checkout.session.async_payment_succeeded", event.data.object);
    expect(await stripe.webhooks.sendOnce(again)).toBe(200);
    expect(await stripe.webhooks.sendOnce(event)).toBe(200);
    expect((await orderRow(orderId)).paid_at).toEqual(paid.paid_at);
    const { rows } = await app.db.query(
      "select count(*)::int as n from order_events where order_id = $1 and type = 'paid'",
      [orderId],
    );
    expect(rows[0].n).toBe(1);
    expect(stripe.refunds()).toEqual([]);
    const order = await waitForOrder(app, orderId, "w1", (o) => o.status === "paid");
    expect(order.payment).toEqual({
      provider: "stripe",
      status: "paid",
      amountCents: PRICE,
      currency: "usd",
    });
    expect((await checkout(app, orderId, token)).status).toBe(409);
  });

  it("does not pay on a wrong amount or currency", async () => {
    const stripe = stripeOf(app);
    const sale = await app.api.createSale({ priceCents: PRICE, stock: 20 });
    const { orderId } = await awaitingOrder(app, sale.productToken, "m1", 2);
    expect((await checkout(app, orderId, await shopperToken("m1"))).status).toBe(200);
    const session = publicSession(sessionOf(stripe, orderId));
    const paidSession = {
      ...session,
      status: "complete",
      payment_status: "paid",
      payment_intent: "pi_test_forged",
    };
    for (const changes of [{ amount_total: PRICE }, { currency: "eur" }, { amount_total: PRICE * 2 + 1 }]) {
      const event = alteredEvent(paidSession, changes);
      const res = await postWebhook(JSON.stringify(event), stripeSignatureOf(JSON.stringify(event)));
      expect(res.status, res.text).toBe(200);
      expect(res.body.outcome).toBe("mismatch");
    }
    expect((await orderRow(orderId)).status).toBe("awaiting_payment");
  });
});

/** A `Stripe-Signature` with the stack's webhook secret. */
function stripeSignatureOf(body: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return signPayload(body, app.stack.vars.STRIPE_WEBHOOK_SECRET as string, timestamp);
}
