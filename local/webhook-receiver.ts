/**
 * `npm run dev`'s stand-in for the shop's back end: a local HTTP server that the dev stack registers as a
 * webhook endpoint for every event type, verifies each delivery with Standard Webhooks'
 * `Webhook(secret).verify` and prints it (a redelivery of a `webhook-id` already seen is marked so).
 * A delivery that does not verify is answered 400 (and retried by QStash, then dead-lettered).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { webhookEventTypes } from "../src/webhooks/event-types";

/** Where the receiver listens on the dev stack. */
export const DEV_RECEIVER_PORT = 8790;

export type WebhookReceiver = { url: string; endpointId: string; close(): Promise<void> };

type Line = { name?: unknown; variantId?: unknown; quantity?: unknown };

/** An order's lines as a person reads them: `EU 42 × 1, EU 43 × 1 ($258.00)`; empty for other events. */
function linesOf(data: Record<string, unknown>): string {
  if (!Array.isArray(data.items) || data.items.length === 0) return "";
  const lines = (data.items as Line[]).map((l) => `${String(l.name ?? l.variantId)} × ${String(l.quantity)}`);
  const amount = typeof data.amountCents === "number" ? ` ($${(data.amountCents / 100).toFixed(2)})` : "";
  return `: ${lines.join(", ")}${amount}`;
}

/** One line for a delivered event: its type, what it is about, its version, an order's lines. */
function describe(payload: { type?: string; data?: Record<string, unknown> }): string {
  const data = payload.data ?? {};
  const about = data.orderId ?? data.saleId ?? "";
  const status = data.status ? ` ${String(data.status)}` : "";
  const version = data.version === undefined ? "" : ` v${String(data.version)}`;
  return `${payload.type ?? "?"} ${String(about)}${status}${version}${linesOf(data)}`;
}

/**
 * Starts the receiver and registers it with the engine at `engineUrl` (operator token `adminToken`).
 *
 * @example
 * const receiver = await startWebhookReceiver("http://127.0.0.1:8787", adminToken);
 */
export async function startWebhookReceiver(
  engineUrl: string,
  adminToken: string,
  opts: { port?: number; log?: (line: string) => void } = {},
): Promise<WebhookReceiver> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const seen = new Set<string>();
  let verifier: Webhook | null = null;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const id = String(req.headers["webhook-id"] ?? "");
      try {
        const payload = verifier?.verify(body, {
          "webhook-id": id,
          "webhook-timestamp": String(req.headers["webhook-timestamp"] ?? ""),
          "webhook-signature": String(req.headers["webhook-signature"] ?? ""),
        }) as { type?: string; data?: Record<string, unknown> };
        log(`[webhook] ${describe(payload)}${seen.has(id) ? " (again)" : ""}`);
        seen.add(id);
        res.writeHead(204).end();
      } catch (error) {
        log(`[webhook] a delivery did not verify: ${error instanceof Error ? error.message : String(error)}`);
        res.writeHead(400).end();
      }
    });
  });
  const port = opts.port ?? DEV_RECEIVER_PORT;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  const res = await fetch(`${engineUrl}/api/admin/webhooks`, {
    method: "POST",
    headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
    body: JSON.stringify({ url, events: webhookEventTypes }),
  });
  if (res.status !== 201) {
    server.close();
    throw new Error(`registering the local webhook receiver failed: ${res.status} ${await res.text()}`);
  }
  const { endpointId, secret } = (await res.json()) as { endpointId: string; secret: string };
  verifier = new Webhook(secret);
  // every connection dropped at close: a client's pool may hold one it never sent a request on
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return { url, endpointId, close };
}
