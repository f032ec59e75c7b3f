import type { StripeServer } from "../../local/stripe-server";
import { stripeEvent } from "../../local/stripe-webhooks";
import type { AppUnderTest } from "./app";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An order's status and payment columns, read straight from Postgres. */
export async function orderPaymentRow(app: AppUnderTest, orderId: string): Promise<Record<string, unknown>> {
  const { rows } = await app.db.query(
    "select status, paid_at, payment_status, payment_ref, refund_ref from orders where id = $1",
    [orderId],
  );
  return rows[0] as Record<string, unknown>;
}

/** The Stripe stand-in of an app started with `stripe: true`. */
export function stripeOf(app: AppUnderTest): StripeServer {
  if (!app.stack.stripe) throw new Error("the app was started without the Stripe stand-in");
  return app.stack.stripe;
}

/** Buys `quantity` and waits until the order is written (`awaiting_payment`); its id and deadline. */
export async function awaitingOrder(
  app: AppUnderTest,
  productToken: string,
  userId: string,
  quantity = 1,
): Promise<{ orderId: string; expiresAt: number }> {
  const bought = await app.api.buy(productToken, userId, quantity);
  if (bought.status !== 202) throw new Error(`buy: ${bought.status} ${bought.text}`);
  const orderId = String(bought.body.orderId);
  await waitForOrder(app, orderId, userId, (o) => o.status === "awaiting_payment");
  return { orderId, expiresAt: Date.parse(String(bought.body.expiresAt)) };
}

/** Polls the shopper's order until `ok` holds; the last order read. */
export async function waitForOrder(
  app: AppUnderTest,
  orderId: string,
  userId: string,
  ok: (order: Record<string, unknown>) => boolean,
  timeoutMs = 30_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await app.api.order(orderId, userId);
    if (res.status === 200 && ok(res.body)) return res.body;
    if (Date.now() > deadline) throw new Error(`order ${orderId}: ${res.status} ${res.text}`);
    await sleep(100);
  }
}

/** The shopper's checkout of an order (the raw answer). */
export async function checkout(app: AppUnderTest, orderId: string, token: string) {
  return app.api.call("POST", `/api/orders/${orderId}/checkout`, { token });
}

/** The stand-in's session of an order (its `client_reference_id`). */
export function sessionOf(stripe: StripeServer, orderId: string) {
  const sessions = stripe.sessions().filter((s) => s.client_reference_id === orderId);
  if (sessions.length !== 1) throw new Error(`order ${orderId}: ${sessions.length} sessions`);
  return sessions[0] as (typeof sessions)[number];
}

/** A `checkout.session.completed` event for the session with some fields changed (still signed right). */
export function alteredEvent(session: Record<string, unknown>, changes: Record<string, unknown>) {
  return stripeEvent("checkout.session.completed", { ...session, ...changes });
}
