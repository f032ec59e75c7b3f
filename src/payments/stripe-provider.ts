import Stripe from "stripe";
import { StoreUnavailableError } from "../errors";
import { traced } from "../tracing";
import type { Checkout, CheckoutRequest, PaymentEvent, PaymentProvider } from "./payment-provider";

/** What the Stripe adapter is built from (settings STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET, STRIPE_API_BASE). */
export type StripeSettings = { secretKey: string; webhookSecret: string; apiBase?: string | undefined };

/** How long one call to Stripe may take before the caller answers 503 (Stripe's default is 80 s). */
const STRIPE_TIMEOUT_MS = 10_000;

/**
 * How long after the order's deadline its Checkout Session expires by itself (else Stripe keeps it
 * payable for 24 hours). Stripe takes an `expires_at` 30 minutes to 24 hours after the session's
 * creation, and a session is opened between the order's creation and its deadline: so the deadline plus
 * this, minutes to spare for clock skew, whenever the window plus this fits in 23 hours; for a longer
 * window, Stripe's default. Decided from the order alone, so every retry under the idempotency key sends
 * the same parameters (Stripe refuses a key reused with others).
 */
const SESSION_EXPIRES_AFTER_DEADLINE_S = 35 * 60;
const SESSION_LONGEST_S = 23 * 3600;

/** The session's `expires_at` (unix seconds) for an order, or undefined for Stripe's default. */
function sessionExpiresAt(request: CheckoutRequest): number | undefined {
  const windowS = (request.orderExpiresAt - request.orderCreatedAt) / 1000;
  if (windowS + SESSION_EXPIRES_AFTER_DEADLINE_S > SESSION_LONGEST_S) return undefined;
  return Math.floor(request.orderExpiresAt / 1000) + SESSION_EXPIRES_AFTER_DEADLINE_S;
}

/**
 * The Stripe adapter of {@link PaymentProvider}: Checkout Sessions, refunds and signed webhooks, through
 * the `stripe` package's fetch HTTP client and SubtleCrypto (so it runs on Workers, Deno and Bun alike).
 * `apiBase` points it elsewhere (locally the stand-in, local/stripe-server.ts) by the client's
 * host / port / protocol options. A checkout's idempotency key derives from the order id, a refund's from
 * the payment, so a retried checkout is the same session and a retried refund the same refund; a refund
 * retried after its key expired (24 hours) is found among the payment's refunds and answered.
 *
 * @example
 * const stripe = stripeProvider({ secretKey: "sk_test_…", webhookSecret: "whsec_…" });
 * const { url } = await stripe.createCheckout({ orderId, lines: [{ name, unitAmountCents: 500, quantity: 1 }], … });
 */
export function stripeProvider(settings: StripeSettings): PaymentProvider {
  const client = new Stripe(settings.secretKey, {
    httpClient: Stripe.createFetchHttpClient(),
    maxNetworkRetries: 2,
    timeout: STRIPE_TIMEOUT_MS,
    telemetry: false,
    ...hostOptions(settings.apiBase),
  });
  const crypto = Stripe.createSubtleCryptoProvider();
  return {
    name: "stripe",
    async createCheckout(request: CheckoutRequest): Promise<Checkout> {
      const session = await call("checkout.sessions.create", () =>
        client.checkout.sessions.create(
          {
            mode: "payment",
            client_reference_id: request.orderId,
            metadata: { orderId: request.orderId },
            payment_intent_data: { metadata: { orderId: request.orderId } },
            line_items: request.lines.map((line) => ({
              quantity: line.quantity,
              price_data: {
                currency: request.currency,
                unit_amount: line.unitAmountCents,
                product_data: { name: line.name },
              },
            })),
            success_url: request.successUrl,
            cancel_url: request.cancelUrl,
            expires_at: sessionExpiresAt(request),
          },
          { idempotencyKey: `checkout-${request.orderId}` },
        ),
      );
      if (!session.url)
        throw new StoreUnavailableError("payments", new Error("checkout session without url"));
      return { id: session.id, url: session.url };
    },
    async expireCheckout(checkoutId: string): Promise<void> {
      const session = await call("checkout.sessions.retrieve", () =>
        client.checkout.sessions.retrieve(checkoutId),
      );
      if (session.status !== "open") return;
      await call("checkout.sessions.expire", () => client.checkout.sessions.expire(checkoutId));
    },
    async refund(orderId: string, paymentRef: string): Promise<string> {
      try {
        const refund = await stripeSpan("refunds.create", () =>
          client.refunds.create(
            { payment_intent: paymentRef, metadata: { orderId } },
            { idempotencyKey: `refund-${paymentRef}` },
          ),
        );
        return refund.id;
      } catch (error) {
        // made before, and its idempotency key gone (Stripe keeps them 24 hours): the refund there is it
        if (!alreadyRefunded(error)) throw new StoreUnavailableError("payments", error);
      }
      const made = await call("refunds.list", () =>
        client.refunds.list({ payment_intent: paymentRef, limit: 10 }),
      );
      const refund = made.data.find((r) => r.status !== "failed" && r.status !== "canceled");
      if (!refund)
        throw new StoreUnavailableError(
          "payments",
          new Error(`${paymentRef} refunded, but no refund is listed`),
        );
      return refund.id;
    },
    async verifyEvent(body: string, signature: string | null): Promise<PaymentEvent | null> {
      if (!signature) return null;
      let event: Stripe.Event;
      try {
        event = await client.webhooks.constructEventAsync(
          body,
          signature,
          settings.webhookSecret,
          undefined,
          crypto,
        );
      } catch {
        return null;
      }
      return paymentEvent(event);
    },
  };
}

/** The engine's reading of a verified Stripe event. */
function paymentEvent(event: Stripe.Event): PaymentEvent {
  const paidTypes = ["checkout.session.completed", "checkout.session.async_payment_succeeded"];
  if (!event.type.startsWith("checkout.session."))
    return { kind: "other", eventId: event.id, type: event.type, orderId: null };
  const session = event.data.object as Stripe.Checkout.Session;
  const orderId = session.client_reference_id ?? session.metadata?.orderId ?? null;
  const paymentRef =
    typeof session.payment_intent === "string" ? session.payment_intent : session.payment_intent?.id;
  if (!paidTypes.includes(event.type) || session.payment_status !== "paid" || !paymentRef)
    return { kind: "other", eventId: event.id, type: event.type, orderId };
  return {
    kind: "paid",
    eventId: event.id,
    type: event.type,
    orderId,
    amountCents: session.amount_total ?? -1,
    currency: (session.currency ?? "").toLowerCase(),
    paymentRef,
    checkoutId: session.id,
  };
}

/** The client's host / port / protocol for an API base URL (none: Stripe's own). */
function hostOptions(apiBase: string | undefined): {
  host?: string;
  port?: string;
  protocol?: "http" | "https";
} {
  if (!apiBase) return {};
  const url = new URL(apiBase);
  const protocol = url.protocol === "http:" ? "http" : "https";
  return { host: url.hostname, port: url.port || (protocol === "http" ? "80" : "443"), protocol };
}

/** Stripe's refusal of a refund for a payment already refunded in full. */
function alreadyRefunded(error: unknown): boolean {
  return error instanceof Stripe.errors.StripeInvalidRequestError && error.code === "charge_already_refunded";
}

/** A Stripe call; a network failure or a refusal becomes `StoreUnavailableError("payments")`. */
async function call<T>(operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await stripeSpan(operation, run);
  } catch (error) {
    throw new StoreUnavailableError("payments", error);
  }
}

/** A Stripe call in a span `stripe <operation>` (with tracing on). */
function stripeSpan<T>(operation: string, run: () => Promise<T>): Promise<T> {
  return traced(`stripe ${operation}`, { "rpc.system": "stripe", "rpc.method": operation }, run);
}
