/**
 * A local stand-in for the Stripe API, answering exactly what the engine's adapter calls
 * (src/payments/stripe-provider.ts, the `stripe` package with its fetch client):
 *
 * - `POST /v1/checkout/sessions` (form-encoded as the library sends it) → a `checkout.session` whose
 *   `amount_total` is Σ unit_amount × quantity, `url` this server's hosted page, `expires_at` as asked
 *   (30 minutes to 24 hours ahead, else 400; default 24 hours), past which an open session has expired;
 * - `GET /v1/checkout/sessions/:id`, `POST /v1/checkout/sessions/:id/expire` (open sessions only);
 * - `POST /v1/refunds` with `payment_intent` (a completed session's) → a succeeded `refund`, or 400
 *   `charge_already_refunded` once it has one; `GET /v1/refunds?payment_intent=` lists them, newest first;
 * - `Authorization: Bearer <secret key>` on all of `/v1/` (401 otherwise); an `Idempotency-Key` seen
 *   before answers the first answer again (a concurrent retry waits for it);
 * - the hosted page `GET /c/pay/:id` with Pay (`POST …/pay`: the session completes, a signed
 *   `checkout.session.completed` goes to the webhook URL, retried on non-2xx, and the shopper is sent
 *   to `success_url`) and Cancel (`POST …/cancel`: back to `cancel_url`, the session stays open).
 *   `POST …/pay` with `Accept: application/json` answers the event instead (tests without a browser).
 *
 * In process, tests reach the state and send events their own way: `sessions()`, `refunds()`,
 * `forgetIdempotencyKeys()` (24 hours on), `pay(id, { deliver: false })`, `webhooks.sendOnce(event)` (duplicates, reordering, late events).
 *
 * @example
 * const stripe = await startStripeServer({ port: 0, secretKey: "sk_test_x", webhookSecret: "whsec_x" });
 * stripe.webhooks.setUrl(`${engineUrl}/api/payments/stripe/webhook`);
 */
import { randomBytes } from "node:crypto";
import { type Context, Hono } from "hono";
import { type OnNode, serveOnNode } from "./hono-on-node";
import { checkoutPage } from "./stripe-checkout-page";
import { createWebhookSender, type StripeEvent, stripeEvent, type WebhookSender } from "./stripe-webhooks";

export type StripeSession = {
  id: string;
  object: "checkout.session";
  mode: string;
  status: "open" | "complete" | "expired";
  payment_status: "unpaid" | "paid";
  amount_total: number;
  currency: string;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  payment_intent: string | null;
  success_url: string;
  cancel_url: string;
  url: string;
  created: number;
  expires_at: number;
  /** Not Stripe's: what the page shows. */
  productName: string;
  quantity: number;
  lines: { name: string; quantity: number; unitAmount: number }[];
};

export type StripeRefund = {
  id: string;
  object: "refund";
  amount: number;
  currency: string;
  payment_intent: string;
  status: "succeeded";
  metadata: Record<string, string>;
};

export type StripeServer = {
  url: string;
  port: number;
  webhooks: WebhookSender;
  sessions(): StripeSession[];
  refunds(): StripeRefund[];
  /** Forgets every idempotency key, as Stripe does 24 hours after a key's first use. */
  forgetIdempotencyKeys(): void;
  /** Completes an open session as the Pay button does; the event is delivered unless `deliver: false`. */
  pay(sessionId: string, options?: { deliver?: boolean }): StripeEvent;
  close(): Promise<void>;
};

const id = (prefix: string) => `${prefix}_test_${randomBytes(12).toString("hex")}`;

export async function startStripeServer(options: {
  port?: number;
  secretKey: string;
  webhookSecret: string;
  webhookUrl?: string;
  retryBaseMs?: number;
  log?: (line: string) => void;
}): Promise<StripeServer> {
  const sessions = new Map<string, StripeSession>();
  const refunds: StripeRefund[] = [];
  const idempotent = new Map<string, Promise<{ status: number; body: unknown }>>();
  const webhooks = createWebhookSender({
    secret: options.webhookSecret,
    ...(options.webhookUrl ? { url: options.webhookUrl } : {}),
    ...(options.retryBaseMs ? { retryBaseMs: options.retryBaseMs } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  let baseUrl = "";

  /** A session as it stands now: an open one past its `expires_at` has expired (as Stripe lapses it). */
  const find = (sessionId: string): StripeSession | undefined => {
    const session = sessions.get(sessionId);
    if (session?.status === "open" && Date.now() / 1000 >= session.expires_at) session.status = "expired";
    return session;
  };

  const pay = (sessionId: string, opts: { deliver?: boolean } = {}): StripeEvent => {
    const session = find(sessionId);
    if (session?.status !== "open") throw new Error(`session ${sessionId} is not open`);
    session.status = "complete";
    session.payment_status = "paid";
    session.payment_intent = id("pi");
    const event = stripeEvent("checkout.session.completed", publicSession(session));
    if (opts.deliver ?? true) void webhooks.send(event);
    return event;
  };

  const api = new Hono<OnNode>();
  api.use("/v1/*", async (c, next) => {
    if (c.req.header("Authorization") !== `Bearer ${options.secretKey}`)
      return stripeError(c, 401, "Invalid API Key provided.");
    const key = c.req.method === "POST" ? c.req.header("Idempotency-Key") : undefined;
    if (!key) return next();
    const first = idempotent.get(key);
    if (first) {
      const { status, body } = await first;
      return c.json(body as object, status as 200, { "Idempotent-Replayed": "true" });
    }
    const answer = (async () => {
      await next();
      return { status: c.res.status, body: await c.res.clone().json() };
    })();
    idempotent.set(key, answer);
    await answer.catch(() => idempotent.delete(key));
  });
  api.post("/v1/checkout/sessions", async (c) => {
    const form = new URLSearchParams(await c.req.text());
    const session = newSession(form, baseUrl);
    if (!session)
      return stripeError(
        c,
        400,
        "Missing line_items, success_url or currency, or expires_at not 30 minutes to 24 hours from now.",
      );
    sessions.set(session.id, session);
    return c.json(publicSession(session));
  });
  api.get("/v1/checkout/sessions/:id", (c) => {
    const session = find(c.req.param("id"));
    return session ? c.json(publicSession(session)) : stripeError(c, 404, "No such checkout.session");
  });
  api.post("/v1/checkout/sessions/:id/expire", (c) => {
    const session = find(c.req.param("id"));
    if (!session) return stripeError(c, 404, "No such checkout.session");
    if (session.status !== "open")
      return stripeError(c, 400, 'Only Checkout Sessions with a status in ["open"] can be expired.');
    session.status = "expired";
    return c.json(publicSession(session));
  });
  api.post("/v1/refunds", async (c) => {
    const form = new URLSearchParams(await c.req.text());
    const intent = form.get("payment_intent");
    const session = [...sessions.values()].find((s) => intent && s.payment_intent === intent);
    if (!session || !intent) return stripeError(c, 400, "No such payment_intent.");
    // refunded in full already (a retry whose idempotency key Stripe no longer holds)
    if (refunds.some((r) => r.payment_intent === intent))
      return stripeError(
        c,
        400,
        `Charge for ${intent} has already been refunded.`,
        "charge_already_refunded",
      );
    const refund: StripeRefund = {
      id: id("re"),
      object: "refund",
      amount: session.amount_total,
      currency: session.currency,
      payment_intent: intent,
      status: "succeeded",
      metadata: { orderId: form.get("metadata[orderId]") ?? "" },
    };
    refunds.push(refund);
    return c.json(refund);
  });
  api.get("/v1/refunds", (c) => {
    const intent = c.req.query("payment_intent");
    const data = refunds.filter((r) => !intent || r.payment_intent === intent).reverse();
    const limit = Math.min(Math.max(Number(c.req.query("limit") ?? 10) || 10, 1), 100);
    return c.json({
      object: "list",
      url: "/v1/refunds",
      has_more: data.length > limit,
      data: data.slice(0, limit),
    });
  });
  api.get("/c/pay/:id", (c) => {
    const session = find(c.req.param("id"));
    return session ? c.html(checkoutPage(session)) : c.text("No such checkout.", 404);
  });
  api.post("/c/pay/:id/pay", (c) => {
    const session = find(c.req.param("id"));
    if (!session) return c.text("No such checkout.", 404);
    if (session.status !== "open") return c.html(checkoutPage(session), 409);
    const event = pay(session.id);
    if (c.req.header("Accept")?.includes("application/json")) return c.json(event);
    return c.redirect(session.success_url, 303);
  });
  api.post("/c/pay/:id/cancel", (c) => {
    const session = find(c.req.param("id"));
    return session ? c.redirect(session.cancel_url, 303) : c.text("No such checkout.", 404);
  });

  const server = await serveOnNode(api, options.port === undefined ? {} : { port: options.port });
  baseUrl = server.url;
  return {
    url: server.url,
    port: server.port,
    webhooks,
    sessions: () => [...sessions.keys()].flatMap((key) => find(key) ?? []),
    refunds: () => [...refunds],
    forgetIdempotencyKeys: () => idempotent.clear(),
    pay,
    close: async () => {
      await webhooks.idle(1_000);
      await server.close();
    },
  };
}

/** A session from the create call's form, or null when it misses what Stripe requires. */
function newSession(form: URLSearchParams, baseUrl: string): StripeSession | null {
  let amount = 0;
  let quantity = 0;
  let currency = "";
  let productName = "";
  const lines: StripeSession["lines"] = [];
  for (let i = 0; form.has(`line_items[${i}][quantity]`); i++) {
    const q = Number(form.get(`line_items[${i}][quantity]`));
    const unitAmount = Number(form.get(`line_items[${i}][price_data][unit_amount]`) ?? 0);
    const name = form.get(`line_items[${i}][price_data][product_data][name]`) ?? "";
    amount += q * unitAmount;
    quantity += q;
    currency ||= form.get(`line_items[${i}][price_data][currency]`) ?? "";
    productName ||= name;
    lines.push({ name, quantity: q, unitAmount });
  }
  const successUrl = form.get("success_url");
  if (quantity === 0 || !currency || !successUrl) return null;
  const sessionId = id("cs");
  const now = Math.floor(Date.now() / 1000);
  // Stripe's rule: 30 minutes to 24 hours after the session's creation (default 24 hours)
  const expiresAt = form.has("expires_at") ? Number(form.get("expires_at")) : now + 24 * 3600;
  if (!Number.isInteger(expiresAt) || expiresAt < now + 30 * 60 || expiresAt > now + 24 * 3600) return null;
  const metadata: Record<string, string> = {};
  for (const [key, value] of form) {
    const match = /^metadata\[(.+)\]$/.exec(key);
    if (match?.[1]) metadata[match[1]] = value;
  }
  return {
    id: sessionId,
    object: "checkout.session",
    mode: form.get("mode") ?? "payment",
    status: "open",
    payment_status: "unpaid",
    amount_total: amount,
    currency,
    client_reference_id: form.get("client_reference_id"),
    metadata,
    payment_intent: null,
    success_url: successUrl,
    cancel_url: form.get("cancel_url") ?? successUrl,
    url: `${baseUrl}/c/pay/${sessionId}`,
    created: now,
    expires_at: expiresAt,
    productName,
    quantity,
    lines,
  };
}

/** The session as the API shows it (without the page's own fields). */
export function publicSession(session: StripeSession): Record<string, unknown> {
  const { productName: _p, quantity: _q, lines: _l, ...rest } = session;
  return { ...rest };
}

function stripeError(c: Context, status: 400 | 401 | 404, message: string, code?: string): Response {
  return c.json({ error: { type: "invalid_request_error", message, ...(code ? { code } : {}) } }, status);
}
