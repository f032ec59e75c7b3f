import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** One delivery as the receiver got it. */
export type Delivery = {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
  /** the secrets (of those the receiver was told) whose `Webhook.verify` accepted it */
  verifiedWith: string[];
  /** what the receiver answered */
  answered: number;
  /** the W3C trace context the delivery carried (with tracing on), or "" */
  traceparent: string;
};

/**
 * A shop's webhook endpoint on a real HTTP server: every POST is checked with Standard Webhooks'
 * `Webhook(secret).verify` against each secret it was given (answering 400 when none verifies), and
 * recorded. `down(true)` makes it answer 500 to everything (recorded too), as an endpoint in an outage;
 * `slow(ms)` makes it answer late.
 */
export async function startWebhookReceiver() {
  const deliveries: Delivery[] = [];
  let secrets: string[] = [];
  let failing = false;
  let delayMs = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = {
        "webhook-id": String(req.headers["webhook-id"] ?? ""),
        "webhook-timestamp": String(req.headers["webhook-timestamp"] ?? ""),
        "webhook-signature": String(req.headers["webhook-signature"] ?? ""),
      };
      const verifiedWith = secrets.filter((secret) => {
        try {
          new Webhook(secret).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      const answered = failing ? 500 : verifiedWith.length > 0 ? 204 : 400;
      let payload: Delivery["payload"] = { type: "?", timestamp: "", data: {} };
      try {
        payload = JSON.parse(body);
      } catch {}
      deliveries.push({
        id: headers["webhook-id"],
        timestamp: headers["webhook-timestamp"],
        signature: headers["webhook-signature"],
        body,
        payload,
        verifiedWith,
        answered,
        traceparent: String(req.headers.traceparent ?? ""),
      });
      if (delayMs > 0) setTimeout(() => res.writeHead(answered).end(), delayMs);
      else res.writeHead(answered).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    deliveries,
    /** The secrets a delivery may verify with (each is tried). */
    trust(...list: string[]) {
      secrets = list;
    },
    down(on: boolean) {
      failing = on;
    },
    /** Answers each POST only after `ms` (a slow endpoint that still answers). */
    slow(ms: number) {
      delayMs = ms;
    },
    /** Deliveries answered 2xx (verified, endpoint up). */
    accepted: () => deliveries.filter((d) => d.answered < 300),
    /**
     * Stops listening and drops every connection: an HTTP client may hold one it opened and never sent a
     * request on (Deno's pool does under concurrent deliveries), which `close` alone waits for until
     * Node's headers timeout.
     */
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export type WebhookReceiver = Awaited<ReturnType<typeof startWebhookReceiver>>;
