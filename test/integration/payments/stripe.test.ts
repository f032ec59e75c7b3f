import { describe, expect, it } from "vitest";
import { startServer } from "../../../local/server-runtime";
import { publicSession } from "../../../local/stripe-server";
import { signPayload, stripeEvent } from "../../../local/stripe-webhooks";
import { exampleSecrets, startWorker, wranglerVars } from "../../../local/worker-runtime";
import { apiClient } from "../../support/api";
import { serverTestVars } from "../../support/app";
import { appForFile } from "../../support/app-per-file";
import {
  alteredEvent,
  awaitingOrder,
  checkout,
  orderPaymentRow,
  sessionOf,
  stripeOf,
  waitForOrder,
} from "../../support/payments";
import { ADMIN_TOKEN, shopperToken } from "../../support/shopper";
import { startWebhookReceiver } from "../../support/webhook-receiver";

const VARS = { SHOPPER_LIMIT_USER_PER_WINDOW: "1000", RATE_LIMIT_USER_PER_WINDOW: "1000" };
const app = appForFile({ stripe: true, vars: VARS });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PRICE = 2500;

/** The webhook, posted by the test itself (forged or replayed deliveries). */
async function postWebhook(body: string, signature: string | null) {
  return app.api.call("POST", "/api/payments/stripe/webhook", {
    rawBody: body,
    headers: { "Content-Type": "application/json", ...(signature ? { "Stripe-Signature": signature } : {}) },
  });
}

const orderRow = (orderId: string) => orderPaymentRow(app, orderId);

/** The refunds of a sale's orders at the stand-in (other tests of the file refund theirs). */
function refundsOf(stripe: ReturnType<typeof stripeOf>, saleId: string) {
  return stripe.refunds().filter((r) => r.metadata.orderId?.startsWith(`${saleId}-`));
}

describe("payments through Stripe (the local stand-in)", () => {
  it("opens one checkout under concurrent retries, for price × quantity, and refuses the shopper's own pay", async () => {
    const stripe = stripeOf(app);
    const sale = await app.api.createSale({ priceCents: PRICE, stock: 20, perUserLimit: 5 });
    const { orderId, expiresAt } = await awaitingOrder(app, sale.productToken, "c1", 3);
    const token = await shopperToken("c1");
    const answers = await Promise.all(Array.from({ length: 8 }, () => checkout(app, orderId, token)));
    for (const res of answers) expect(res.status, res.text).toBe(200);
    const urls = new Set(answers.map((r) => r.body.url));
    expect(urls.size).toBe(1);
    expect(answers[0]?.body).toMatchObject({ orderId, provider: "stripe" });
    const session = sessionOf(stripe, orderId);
    expect(session).toMatchObject({ amount_total: PRICE * 3, currency: "usd", metadata: { orderId } });
    // the session closes itself 35 minutes after the order's deadline (not after Stripe's default 24 h),
    // should every close the engine asks for fail
    expect(session.expires_at).toBe(Math.floor(expiresAt / 1000) + 35 * 60);
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
    const withRef = await app.api.call("POST", `/api/orders/${orderId}/pay`, {
      token,
      body: { paymentRef: "pi_x" },
    });
    expect((withRef.body.error as { code: string }).code).toBe("CHECKOUT_REQUIRED");
    const confirm = await app.api.call("POST", `/api/admin/orders/${orderId}/payment`, {
      token: ADMIN_TOKEN,
    });
    expect((confirm.body.error as { code: string }).code).toBe("CONFLICT");
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
    expect(refundsOf(stripe, sale.saleId)).toEqual([]);
    const order = await waitForOrder(app, orderId, "w1", (o) => o.status === "paid");
    expect(order.payment).toEqual({
      provider: "stripe",
      status: "paid",
      amountCents: PRICE,
      currency: "usd",
    });
    expect((await checkout(app, orderId, token)).status).toBe(409);
  });

  it("does not pay on a wrong amount or currency, and refunds nothing of an order still open", async () => {
    const stripe = stripeOf(app);
    const sale = await app.api.createSale({ priceCents: PRICE, stock: 20 });
    const { orderId } = await awaitingOrder(app, sale.productToken, "m1", 2);
    expect((await checkout(app, orderId, await shopperToken("m1"))).status).toBe(200);
    // the order's own session, completed, in events that disagree with the order (a currency changed)
    const paid = stripe.pay(sessionOf(stripe, orderId).id, { deliver: false });
    for (const changes of [{ amount_total: PRICE }, { currency: "eur" }, { amount_total: PRICE * 2 + 1 }]) {
      const event = alteredEvent(paid.data.object, changes);
      const res = await postWebhook(JSON.stringify(event), stripeSignatureOf(JSON.stringify(event)));
      expect(res.status, res.text).toBe(200);
      expect(res.body.outcome).toBe("mismatch");
    }
    expect(await orderRow(orderId)).toMatchObject({ status: "awaiting_payment", paid_at: null });
    expect(refundsOf(stripe, sale.saleId)).toEqual([]);
  });

  it("pays only on the order's own checkout session, not on another session naming the order", async () => {
    const stripe = stripeOf(app);
    const sale = await app.api.createSale({ priceCents: PRICE, stock: 20 });
    const opened = await awaitingOrder(app, sale.productToken, "f1");
    const never = await awaitingOrder(app, sale.productToken, "f2");
    expect((await checkout(app, opened.orderId, await shopperToken("f1"))).status).toBe(200);
    const own = publicSession(sessionOf(stripe, opened.orderId));
    // another session of the same Stripe account naming the order (a Payment Link opened with
    // ?client_reference_id=…, another integration's session), for the right amount and currency
    for (const orderId of [opened.orderId, never.orderId]) {
      const foreign = alteredEvent(own, {
        id: `cs_test_elsewhere_${orderId.slice(-6)}`,
        client_reference_id: orderId,
        metadata: { orderId },
        status: "complete",
        payment_status: "paid",
        payment_intent: `pi_test_elsewhere_${orderId.slice(-6)}`,
        url: null,
      });
      const res = await postWebhook(JSON.stringify(foreign), stripeSignatureOf(JSON.stringify(foreign)));
      expect(res.status, res.text).toBe(200);
      expect(res.body.outcome).toBe("mismatch");
      expect((await orderRow(orderId)).status).toBe("awaiting_payment");
    }
    // the order's own session still pays it
    stripe.pay(own.id as string, { deliver: false });
    const paid = stripeEvent("checkout.session.completed", publicSession(sessionOf(stripe, opened.orderId)));
    expect(await stripe.webhooks.sendOnce(paid)).toBe(200);
    expect((await orderRow(opened.orderId)).status).toBe("paid");
    expect(refundsOf(stripe, sale.saleId)).toEqual([]);
  });

  it("a payment naming an order still queued is a mismatch and writes nothing; no such order is unknown_order", async () => {
    const stripe = stripeOf(app);
    const sale = await app.api.createSale({ priceCents: PRICE, stock: 20 });
    const opened = await awaitingOrder(app, sale.productToken, "q1");
    expect((await checkout(app, opened.orderId, await shopperToken("q1"))).status).toBe(200);
    const own = publicSession(sessionOf(stripe, opened.orderId));
    const naming = (orderId: string) =>
      alteredEvent(own, {
        id: `cs_test_queued_${orderId.slice(-6)}`,
        client_reference_id: orderId,
        metadata: { orderId },
        status: "complete",
        payment_status: "paid",
        payment_intent: `pi_test_queued_${orderId.slice(-6)}`,
        url: null,
      });
    // the order-write job is held: the order stays queued in Redis
    app.stack.qstash.pause();
    let queued = "";
    try {
      const bought = await app.api.buy(sale.productToken, "q2", 1);
      expect(bought.status, bought.text).toBe(202);
      queued = String(bought.body.orderId);
      const event = naming(queued);
      const res = await postWebhook(JSON.stringify(event), stripeSignatureOf(JSON.stringify(event)));
      expect(res.status, res.text).toBe(200);
      expect(res.body.outcome).toBe("mismatch");
      expect(await orderRow(queued)).toBeUndefined();
      const unknown = naming(`${sale.saleId}-${"0".repeat(20)}`);
      const none = await postWebhook(JSON.stringify(unknown), stripeSignatureOf(JSON.stringify(unknown)));
      expect(none.status, none.text).toBe(200);
      expect(none.body.outcome).toBe("unknown_order");
    } finally {
      app.stack.qstash.resume();
    }
    await waitForOrder(app, queued, "q2", (o) => o.status === "awaiting_payment");
    expect(refundsOf(stripe, sale.saleId)).toEqual([]);
  });
});

describe("late payments, the deadline, the checkout page", () => {
  it("refunds a payment that lands after the order expired, exactly once, and keeps the order expired", async () => {
    const stripe = stripeOf(app);
    const sale = await app.api.createSale({ priceCents: PRICE, stock: 5, paymentWindowSeconds: 2 });
    const { orderId } = await awaitingOrder(app, sale.productToken, "l1");
    expect((await checkout(app, orderId, await shopperToken("l1"))).status).toBe(200);
    const event = stripe.pay(sessionOf(stripe, orderId).id, { deliver: false });
    await waitForOrder(app, orderId, "l1", (o) => o.status === "expired");
    const statuses = await Promise.all([stripe.webhooks.sendOnce(event), stripe.webhooks.sendOnce(event)]);
    expect(statuses).toEqual([200, 200]);
    expect(await stripe.webhooks.sendOnce(stripeEvent(event.type, event.data.object))).toBe(200);
    expect(await stripe.webhooks.sendOnce(event)).toBe(200);
    const intent = event.data.object.payment_intent;
    expect(stripe.refunds().filter((r) => r.payment_intent === intent)).toHaveLength(1);
    expect(await orderRow(orderId)).toMatchObject({
      status: "expired",
      paid_at: null,
      payment_status: "refunded",
    });
    const order = await app.api.order(orderId, "l1");
    expect(order.body).toMatchObject({
      status: "expired",
      payment: { provider: "stripe", status: "refunded" },
    });
    const stats = await app.api.stats(sale.saleId);
    expect(stats.body).toMatchObject({ remaining: 5, paid: 0, expired: 1, invariantHolds: true });
  });

  it("records a refund Stripe made before but the engine never recorded, once its idempotency key is gone", async () => {
    const stripe = stripeOf(app);
    const sale = await app.api.createSale({ priceCents: PRICE, stock: 5, paymentWindowSeconds: 2 });
    const { orderId } = await awaitingOrder(app, sale.productToken, "l24");
    expect((await checkout(app, orderId, await shopperToken("l24"))).status).toBe(200);
    const event = stripe.pay(sessionOf(stripe, orderId).id, { deliver: false });
    await waitForOrder(app, orderId, "l24", (o) => o.status === "expired");
    const intent = String(event.data.object.payment_intent);
    // the refund reached Stripe, its recording never happened, and a day later Stripe forgot the key
    const made = await fetch(`${stripe.url}/v1/refunds`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${String(app.stack.vars.STRIPE_SECRET_KEY)}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ payment_intent: intent, "metadata[orderId]": orderId }),
    });
    expect(made.status).toBe(200);
    const refundId = ((await made.json()) as { id: string }).id;
    stripe.forgetIdempotencyKeys();
    expect(await stripe.webhooks.sendOnce(event)).toBe(200);
    expect(
      stripe
        .refunds()
        .filter((r) => r.payment_intent === intent)
        .map((r) => r.id),
    ).toEqual([refundId]);
    expect(await orderRow(orderId)).toMatchObject({
      status: "expired",
      payment_status: "refunded",
      refund_ref: refundId,
    });
  });

  it("decides exactly one of paid / expired (+ one refund) when the payment races the deadline", async () => {
    const stripe = stripeOf(app);
    const sale = await app.api.createSale({
      priceCents: PRICE,
      stock: 10,
      perUserLimit: 1,
      paymentWindowSeconds: 3,
    });
    const offsets = [-400, -100, 0, 100, 400];
    const orders = await Promise.all(
      offsets.map(async (offset, i) => {
        const { orderId, expiresAt } = await awaitingOrder(app, sale.productToken, `r${i}`);
        expect((await checkout(app, orderId, await shopperToken(`r${i}`))).status).toBe(200);
        return {
          orderId,
          expiresAt,
          offset,
          userId: `r${i}`,
          event: stripe.pay(sessionOf(stripe, orderId).id, { deliver: false }),
        };
      }),
    );
    await Promise.all(
      orders.map(async (o) => {
        await sleep(Math.max(0, o.expiresAt + o.offset - Date.now()));
        await stripe.webhooks.send(o.event);
      }),
    );
    let paid = 0;
    for (const o of orders) {
      const order = await waitForOrder(app, o.orderId, o.userId, (x) => x.status !== "awaiting_payment");
      const refunds = stripe.refunds().filter((r) => r.payment_intent === o.event.data.object.payment_intent);
      if (order.status === "paid") {
        paid++;
        expect(refunds).toHaveLength(0);
        expect(order.payment).toMatchObject({ status: "paid" });
      } else {
        expect(order.status).toBe("expired");
        expect(refunds).toHaveLength(1);
        expect((await orderRow(o.orderId)).payment_status).toBe("refunded");
      }
    }
    await app.drain();
    const stats = await app.api.stats(sale.saleId);
    expect(stats.body).toMatchObject({
      paid,
      expired: offsets.length - paid,
      remaining: 10 - paid,
      invariantHolds: true,
    });
  });

  it("walks the checkout page: Cancel goes back with the order still awaiting payment, Pay makes it paid", async () => {
    const stripe = stripeOf(app);
    const sale = await app.api.createSale({ priceCents: PRICE, stock: 5 });
    const { orderId } = await awaitingOrder(app, sale.productToken, "p1");
    const { body } = await checkout(app, orderId, await shopperToken("p1"));
    const page = await fetch(String(body.url));
    expect(await page.text()).toContain('id="pay"');
    const cancelled = await fetch(`${body.url}/cancel`, { method: "POST", redirect: "manual" });
    expect(cancelled.status).toBe(303);
    expect(cancelled.headers.get("location")).toContain(`order=${orderId}`);
    expect((await app.api.order(orderId, "p1")).body.status).toBe("awaiting_payment");
    expect(sessionOf(stripe, orderId).status).toBe("open");
    const paid = await fetch(`${body.url}/pay`, { method: "POST", redirect: "manual" });
    expect(paid.status).toBe(303);
    expect(paid.headers.get("location")).toContain("checkout=paid");
    await waitForOrder(app, orderId, "p1", (o) => o.status === "paid", 10_000);
    expect(sessionOf(stripe, orderId)).toMatchObject({ status: "complete", payment_status: "paid" });
  });

  it("closes the Stripe session when the shopper cancels the order", async () => {
    const stripe = stripeOf(app);
    const sale = await app.api.createSale({ priceCents: PRICE, stock: 5 });
    const { orderId } = await awaitingOrder(app, sale.productToken, "x1");
    const token = await shopperToken("x1");
    expect((await checkout(app, orderId, token)).status).toBe(200);
    expect((await app.api.order(orderId, "x1", "cancel")).status).toBe(200);
    const deadline = Date.now() + 10_000;
    while (sessionOf(stripe, orderId).status !== "expired" && Date.now() < deadline) await sleep(100);
    expect(sessionOf(stripe, orderId).status).toBe("expired");
    const again = await checkout(app, orderId, token);
    expect((again.body.error as { code: string }).code).toBe("ORDER_CANCELLED");
  });
});

describe("the refund's webhook", () => {
  it("announces order.refunded even when the database fails between recording the refund and its event", async () => {
    const stripe = stripeOf(app);
    const receiver = await startWebhookReceiver();
    const created = await app.api.admin<{ secret: string; endpointId: string }>("POST", "/webhooks", {
      url: receiver.url,
      events: ["order.refunded"],
    });
    receiver.trust(created.body.secret);
    try {
      // a window of 3 s: the checkout opens within it even on a busy machine
      const sale = await app.api.createSale({ priceCents: PRICE, stock: 5, paymentWindowSeconds: 3 });
      const { orderId } = await awaitingOrder(app, sale.productToken, "rf1");
      expect((await checkout(app, orderId, await shopperToken("rf1"))).status).toBe(200);
      const event = stripe.pay(sessionOf(stripe, orderId).id, { deliver: false });
      await waitForOrder(app, orderId, "rf1", (o) => o.status === "expired");
      // the outbox refuses the refund's event once (a connection lost after the refund was recorded)
      await app.db.query(`
        create or replace function fail_refund_event() returns trigger language plpgsql as $$
        begin
          if new.event ->> 'type' = 'order.refunded' then raise exception 'outbox down'; end if;
          return new;
        end $$;
        create trigger fail_refund_event before insert on webhook_outbox
          for each row execute function fail_refund_event();`);
      const delivery = stripe.webhooks.send(event);
      try {
        const deadline = Date.now() + 10_000;
        while (!stripe.webhooks.attempts().some((a) => a.eventId === event.id) && Date.now() < deadline)
          await sleep(20);
      } finally {
        await app.db.query(
          "drop trigger fail_refund_event on webhook_outbox; drop function fail_refund_event();",
        );
      }
      expect(await delivery).toBe(200);
      const deadline = Date.now() + 15_000;
      const refunded = () => receiver.accepted().filter((d) => d.payload.data.orderId === orderId);
      while (refunded().length === 0 && Date.now() < deadline) await sleep(100);
      expect(refunded().map((d) => [d.payload.type, d.payload.data.status])).toContainEqual([
        "order.refunded",
        "expired",
      ]);
      const intent = event.data.object.payment_intent;
      expect(stripe.refunds().filter((r) => r.payment_intent === intent)).toHaveLength(1);
      expect((await orderRow(orderId)).payment_status).toBe("refunded");
    } finally {
      await app.api.admin("DELETE", `/webhooks/${created.body.endpointId}`);
      await receiver.close();
    }
  }, 60_000);
});

describe("an order as another process reads it", () => {
  it("a process that saw an order expired shows the refund of its late payment", async () => {
    const stripe = stripeOf(app);
    const vars = {
      ...wranglerVars(),
      ...exampleSecrets(),
      ...app.stack.vars,
      ...(app.runtime === "workers" ? {} : serverTestVars(app.stack)),
      ...VARS,
    };
    const other =
      app.runtime === "workers"
        ? await startWorker({ vars })
        : await startServer({ runtime: app.runtime, vars });
    try {
      // a window of 3 s: the checkout opens within it even on a busy machine
      const sale = await app.api.createSale({ priceCents: PRICE, stock: 5, paymentWindowSeconds: 3 });
      const { orderId } = await awaitingOrder(app, sale.productToken, "iso1");
      expect((await checkout(app, orderId, await shopperToken("iso1"))).status).toBe(200);
      const event = stripe.pay(sessionOf(stripe, orderId).id, { deliver: false });
      await waitForOrder(app, orderId, "iso1", (o) => o.status === "expired");
      const before = await apiClient(other.url).order(orderId, "iso1");
      expect(before.body).toMatchObject({ status: "expired", payment: { status: "pending" } });
      // the late payment's webhook reaches the first process, which refunds it
      expect(await stripe.webhooks.sendOnce(event)).toBe(200);
      expect((await orderRow(orderId)).payment_status).toBe("refunded");
      const after = await apiClient(other.url).order(orderId, "iso1");
      expect(after.body).toMatchObject({ status: "expired", payment: { status: "refunded" } });
    } finally {
      await other.stop();
    }
  });
});

describe("the manual provider (the shop's back end confirms)", () => {
  it("pays only through the operator route; the shopper's pay is refused", async () => {
    await app.worker.setVars({
      ...wranglerVars(),
      ...exampleSecrets(),
      ...app.stack.vars,
      ...(app.runtime === "workers" ? {} : serverTestVars(app.stack)),
      ...VARS,
      PAYMENT_PROVIDER: "manual",
    });
    try {
      const sale = await app.api.createSale({ priceCents: PRICE, stock: 5 });
      const { orderId } = await awaitingOrder(app, sale.productToken, "n1", 2);
      const pay = await app.api.order(orderId, "n1", "pay");
      expect((pay.body.error as { code: string }).code).toBe("CHECKOUT_REQUIRED");
      const open = await checkout(app, orderId, await shopperToken("n1"));
      expect(open.body).toMatchObject({ provider: "manual", orderId });
      const path = `/orders/${orderId}/payment`;
      for (const token of [undefined, await shopperToken("n1"), "wrong-token"]) {
        const res = await app.api.call("POST", `/api/admin${path}`, token ? { token } : {});
        expect(res.status).toBe(401);
      }
      expect((await orderRow(orderId)).status).toBe("awaiting_payment");
      const confirmed = await app.api.call("POST", `/api/admin${path}`, {
        token: ADMIN_TOKEN,
        body: { paymentRef: "shop-42" },
      });
      expect(confirmed.status, confirmed.text).toBe(200);
      expect(confirmed.body).toMatchObject({
        status: "paid",
        payment: { provider: "manual", status: "paid", amountCents: PRICE * 2, currency: "usd" },
      });
      expect((await app.api.call("POST", `/api/admin${path}`, { token: ADMIN_TOKEN })).status).toBe(200);
      expect((await orderRow(orderId)).payment_ref).toBe("shop-42");
      const unknown = await app.api.call("POST", `/api/admin/orders/${sale.saleId}-nope/payment`, {
        token: ADMIN_TOKEN,
      });
      expect(unknown.status).toBe(404);
    } finally {
      await app.worker.setVars({
        ...wranglerVars(),
        ...exampleSecrets(),
        ...app.stack.vars,
        ...(app.runtime === "workers" ? {} : serverTestVars(app.stack)),
        ...VARS,
      });
    }
  });
});

/** A `Stripe-Signature` with the stack's webhook secret. */
function stripeSignatureOf(body: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return signPayload(body, app.stack.vars.STRIPE_WEBHOOK_SECRET as string, timestamp);
}
