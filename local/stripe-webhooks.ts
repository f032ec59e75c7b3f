/**
 * The Stripe stand-in's event deliveries, as Stripe sends them: `POST` of the event's JSON with
 * `Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, retried with
 * exponential backoff while the endpoint answers anything but 2xx (or cannot be reached).
 *
 * @example
 * const sender = createWebhookSender({ secret: "whsec_…", retryBaseMs: 100 });
 * sender.setUrl("http://127.0.0.1:8787/api/payments/stripe/webhook");
 * sender.send(event);
 * await sender.idle(5_000);
 */
import { createHmac, randomBytes } from "node:crypto";
import { errorMessage } from "./http-util";

/** A Stripe event as delivered (`data.object` is the resource it is about). */
export type StripeEvent = {
  id: string;
  object: "event";
  api_version: string;
  created: number;
  type: string;
  livemode: false;
  pending_webhooks: number;
  request: { id: null; idempotency_key: null };
  data: { object: Record<string, unknown> };
};

/** One delivery attempt: the endpoint's status, 0 when it could not be reached. */
export type DeliveryAttempt = { eventId: string; status: number; at: number };

export type WebhookSender = {
  setUrl(url: string | undefined): void;
  /** Delivers in the background, retried on non-2xx; resolves with the final status (0: gave up). */
  send(event: StripeEvent): Promise<number>;
  /** One signed attempt now, no retries (tests: duplicates, reordering, late events). */
  sendOnce(event: StripeEvent, options?: { timestamp?: number; secret?: string }): Promise<number>;
  attempts(): DeliveryAttempt[];
  /** Resolves once no delivery is pending (or after `timeoutMs`). */
  idle(timeoutMs?: number): Promise<void>;
};

/** A new event of `type` about `object`. */
export function stripeEvent(type: string, object: Record<string, unknown>): StripeEvent {
  return {
    id: `evt_${randomBytes(12).toString("hex")}`,
    object: "event",
    api_version: "2025-01-27.acacia",
    created: Math.floor(Date.now() / 1000),
    type,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: { object },
  };
}

/** The `Stripe-Signature` header of `payload` at `timestamp` (unix seconds). */
export function signPayload(payload: string, secret: string, timestamp: number): string {
  const v1 = createHmac("sha256", secret).update(`${timestamp}.${payload}`).digest("hex");
  return `t=${timestamp},v1=${v1}`;
}

export function createWebhookSender(options: {
  secret: string;
  url?: string;
  /** Retry n waits retryBaseMs × 2^(n−1), capped at 60 s. Default 1,000 ms. */
  retryBaseMs?: number;
  /** Attempts before giving up. Default 10. */
  maxAttempts?: number;
  log?: (line: string) => void;
}): WebhookSender {
  let url = options.url;
  const base = options.retryBaseMs ?? 1_000;
  const maxAttempts = options.maxAttempts ?? 10;
  const attempts: DeliveryAttempt[] = [];
  const pending = new Set<Promise<number>>();

  const sendOnce: WebhookSender["sendOnce"] = async (event, opts = {}) => {
    if (!url) return 0;
    const payload = JSON.stringify(event, null, 2);
    const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
    const signature = signPayload(payload, opts.secret ?? options.secret, timestamp);
    const status = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json; charset=utf-8", "Stripe-Signature": signature },
      body: payload,
      signal: AbortSignal.timeout(30_000),
    }).then(
      async (res) => {
        await res.arrayBuffer().catch(() => undefined);
        return res.status;
      },
      (error: unknown) => {
        options.log?.(`webhook ${event.id} to ${url}: ${errorMessage(error)}`);
        return 0;
      },
    );
    attempts.push({ eventId: event.id, status, at: Date.now() });
    return status;
  };

  const deliver = async (event: StripeEvent): Promise<number> => {
    for (let attempt = 1; ; attempt++) {
      const status = await sendOnce(event);
      if (status >= 200 && status < 300) return status;
      if (attempt >= maxAttempts) {
        options.log?.(`webhook ${event.id}: gave up after ${attempt} attempts (last ${status})`);
        return 0;
      }
      await new Promise((r) => setTimeout(r, Math.min(60_000, base * 2 ** (attempt - 1))));
    }
  };

  return {
    setUrl(next) {
      url = next;
    },
    send(event) {
      const delivery = deliver(event);
      pending.add(delivery);
      void delivery.finally(() => pending.delete(delivery));
      return delivery;
    },
    sendOnce,
    attempts: () => [...attempts],
    async idle(timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (pending.size > 0 && Date.now() < deadline) {
        await Promise.race([Promise.allSettled([...pending]), new Promise((r) => setTimeout(r, 50))]);
      }
    },
  };
}
