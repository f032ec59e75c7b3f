import type { StripeServer } from "../../local/stripe-server";
import { type StripeEvent, stripeEvent } from "../../local/stripe-webhooks";
import { startApp } from "../../test/support/app";
import { shopperToken } from "../../test/support/shopper";
import type { Scenario, ScenarioContext } from "../scenario";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A payment made at the Stripe stand-in: its order, its PaymentIntent, whether it was held past the window. */
type Payment = { orderId: string; intent: string; late: boolean };

/**
 * Payments through Stripe (the stand-in) while shoppers buy and cancel: most orders get a checkout and
 * are paid there, each payment's webhook sent three times at once (the same event twice, and again
 * under a new event id); every fourth order's payment is held past its 3 s window (late: it must be
 * refunded once, the order staying expired or cancelled); every fourth order is left unpaid; and the
 * engine's webhook endpoint is unreachable for a while (deliveries retried with backoff). Afterwards
 * each payment must have exactly one outcome: paid with no refund, or expired / cancelled with exactly
 * one refund; the checker adds that no order is both paid and restored.
 */
export const paymentStorm: Scenario = {
  name: "payment-storm",
  title: "Stripe payments: webhook storms, late payments, the webhook endpoint down for a while",
  start: async (vars) => ({ app: await startApp({ vars, stripe: true }) }),
  async run(ctx) {
    const stripe = ctx.app.stack.stripe as StripeServer;
    const payments: Payment[] = [];
    const deliveries: Promise<unknown>[] = [];
    const done = new AbortController();
    const payer = payOrders(ctx, stripe, payments, deliveries, done.signal);
    await Promise.all([
      ctx.workload({ payRate: 0, raceRate: 0 }),
      (async () => {
        await sleep(ctx.ms(1_500, 4_000));
        const downMs = ctx.ms(2_000, 8_000);
        stripe.webhooks.setUrl("http://127.0.0.1:9/api/payments/stripe/webhook");
        ctx.fault(`webhook endpoint unreachable for ${downMs / 1000} s`);
        await sleep(downMs);
        stripe.webhooks.setUrl(`${ctx.app.worker.url}/api/payments/stripe/webhook`);
      })(),
    ]);
    done.abort();
    await payer;
    await Promise.allSettled(deliveries);
    await stripe.webhooks.idle(60_000);
    await judge(ctx, stripe, payments);
  },
};

/** Pays each order that reaches awaiting_payment (but every fourth), until `signal` aborts. */
async function payOrders(
  ctx: ScenarioContext,
  stripe: StripeServer,
  payments: Payment[],
  deliveries: Promise<unknown>[],
  signal: AbortSignal,
): Promise<void> {
  const seen = new Set<string>();
  while (!signal.aborted) {
    const { rows } = await ctx.app.db.query<{ id: string; user_id: string }>(
      "select id, user_id from orders where sale_id = $1 and status = 'awaiting_payment'",
      [ctx.sale.saleId],
    );
    for (const row of rows) {
      if (seen.has(row.id)) continue;
      seen.add(row.id);
      if (seen.size % 4 === 0) continue;
      const token = await shopperToken(row.user_id);
      const res = await ctx.app.api.call("POST", `/api/orders/${row.id}/checkout`, { token });
      const session = stripe.sessions().find((s) => s.client_reference_id === row.id);
      if (res.status !== 200 || session?.status !== "open") continue;
      const event = stripe.pay(session.id, { deliver: false });
      const late = seen.size % 4 === 2;
      payments.push({ orderId: row.id, intent: String(event.data.object.payment_intent), late });
      deliveries.push(storm(stripe, event, late ? 4_000 : 0));
    }
    await sleep(100);
  }
}

/** The event three times at once (twice itself, once under a new id), after `delayMs`. */
async function storm(stripe: StripeServer, event: StripeEvent, delayMs: number): Promise<void> {
  await sleep(delayMs);
  await Promise.all([
    stripe.webhooks.send(event),
    stripe.webhooks.sendOnce(event),
    stripe.webhooks.send(stripeEvent(event.type, event.data.object)),
  ]);
}

/** Every payment has exactly one outcome: paid and kept, or refunded once on an expired or cancelled order. */
async function judge(ctx: ScenarioContext, stripe: StripeServer, payments: Payment[]): Promise<void> {
  const refunds = stripe.refunds();
  const tally = { paid: 0, refunded: 0, late: payments.filter((p) => p.late).length };
  for (const p of payments) {
    const { rows } = await ctx.app.db.query<{ status: string; payment_status: string | null }>(
      "select status, payment_status from orders where id = $1",
      [p.orderId],
    );
    const row = rows[0];
    const given = refunds.filter((r) => r.payment_intent === p.intent).length;
    if (row?.status === "paid" && row.payment_status === "paid" && given === 0) tally.paid++;
    else if (
      (row?.status === "expired" || row?.status === "cancelled") &&
      row.payment_status === "refunded" &&
      given === 1
    )
      tally.refunded++;
    else
      ctx.violation(
        `order ${p.orderId} paid at Stripe ended ${row?.status} / payment ${row?.payment_status} with ${given} refund(s)`,
      );
  }
  ctx.fault(
    `${payments.length} payments (${tally.late} held past the window), each webhook sent 3 times: ${tally.paid} paid, ${tally.refunded} refunded once`,
  );
}
