import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../../../local/otlp-receiver";
import { type AppUnderTest, startApp, testRuntime } from "../../support/app";
import { checkout, sessionOf, stripeOf, waitForOrder } from "../../support/payments";
import { shopperToken } from "../../support/shopper";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver";

/**
 * One trace from a buy to the shop's webhook, read back from an OTLP receiver on loopback: the buy
 * (a trace of its own on Bun, the caller's `traceparent` only linked; Deno's runtime follows it), its
 * reservation script with its code, the QStash publish, the
 * order-write job and its statement, the Stripe payment (a webhook of its own, continued from the order's
 * stored trace context), the `order.paid` delivery job and its POST, which carries the trace to the shop.
 * Bun exports through the engine's SDK, Deno through its own OpenTelemetry. Workers' traces are
 * Cloudflare's (wrangler.toml `[observability.traces]`), recorded by the platform and not exported by a
 * local workerd: there is nothing to read back there, so this file runs on the server runtimes only
 * (vitest.config.ts SERVERS_ONLY).
 */
const runtime = testRuntime();
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER = `00-${TRACE_ID}-00f067aa0ba902b7-01`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(`on ${runtime}: a buy, its order, its payment and its webhook, one trace`, () => {
  let app: AppUnderTest;
  let otlp: OtlpReceiver;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    receiver = await startWebhookReceiver();
    app = await startApp({
      stripe: true,
      vars: { SHOPPER_LIMIT_USER_PER_WINDOW: "1000", RATE_LIMIT_USER_PER_WINDOW: "1000" },
      beforeEngine: async () => ({
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_DENO: "true",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_DENO_CONSOLE: "ignore",
        OTEL_SERVICE_NAME: "flash-sale-test",
      }),
    });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
    await otlp?.close();
  });

  /** The span whose request id is `requestId` (spans arrive in batches). */
  async function spanOfRequest(requestId: string): Promise<ReceivedSpan> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const found = otlp.spans().find((s) => s.attributes["flash_sale.request_id"] === requestId);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no span of request ${requestId}`);
      await sleep(250);
    }
  }

  /** The trace's spans once every name in `names` is among them (spans arrive in batches). */
  async function traceWith(
    traceId: string,
    names: ((s: ReceivedSpan) => boolean)[],
  ): Promise<ReceivedSpan[]> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const spans = otlp.spans().filter((s) => s.traceId === traceId);
      const missing = names.filter((n) => !spans.some(n));
      if (missing.length === 0) return spans;
      if (Date.now() > deadline)
        throw new Error(`${missing.length} span(s) missing from ${spans.map((s) => s.name).join(", ")}`);
      await sleep(250);
    }
  }

  it("shows the store calls of every step under the buy's trace id, and hands it to the shop", async () => {
    const created = await app.api.admin<{ secret: string }>("POST", "/webhooks", {
      url: receiver.url,
      events: ["order.paid"],
    });
    expect(created.status).toBe(201);
    receiver.trust(created.body.secret);
    const sale = await app.api.createSale({ priceCents: 1500, stock: 5, perUserLimit: 1 });

    const bought = await app.api.buy(sale.productToken, "traced-1", 1, { traceparent: CALLER });
    expect(bought.status, bought.text).toBe(202);
    const orderId = String(bought.body.orderId);
    await waitForOrder(app, orderId, "traced-1", (o) => o.status === "awaiting_payment");
    expect((await checkout(app, orderId, await shopperToken("traced-1"))).status).toBe(200);
    const stripe = stripeOf(app);
    stripe.pay(sessionOf(stripe, orderId).id);
    await waitForOrder(app, orderId, "traced-1", (o) => o.status === "paid");

    const buy = await spanOfRequest(String(bought.headers.get("x-request-id")));
    const traceId = buy.traceId;
    if (runtime === "bun") {
      // a shopper does not choose the trace (its id decides the sampling): its context is linked only
      expect(traceId).not.toBe(TRACE_ID);
      expect(buy.links).toEqual([{ traceId: TRACE_ID, spanId: "00f067aa0ba902b7" }]);
    } else {
      // Deno's own server span follows the caller's context
      expect(traceId).toBe(TRACE_ID);
    }
    const route = (r: string) => (s: ReceivedSpan) => s.attributes["http.route"] === r;
    const named = (n: string) => (s: ReceivedSpan) => s.name === n;
    const spans = await traceWith(traceId, [
      route("/api/buy/:productToken"),
      named("EVALSHA reserve-stock"),
      // the order's publish, 20 ms after the buy answered, is still the buy's step
      (s) => s.name.startsWith("qstash ") && s.parentSpanId === buy.spanId,
      route("/api/jobs/order-write"),
      (s) => s.name.startsWith("postgres WITH INSERT"),
      named("payment checkout.session.completed"),
      route("/api/jobs/webhook-delivery"),
      named("webhook POST"),
    ]);

    expect(buy.attributes["http.route"]).toBe("/api/buy/:productToken");
    // the product token is a secret until the sale is live: never in a span
    expect(JSON.stringify(spans)).not.toContain(sale.productToken);
    expect(spans.find(named("EVALSHA reserve-stock"))?.attributes).toMatchObject({
      "db.system.name": "redis",
      "flash_sale.script.code": "OK",
    });
    expect(new Set(spans.map((s) => s.service))).toContain("flash-sale-test");
    // the payment arrived in a request of its own: its span continues the order's trace and links it
    const paid = spans.find(named("payment checkout.session.completed"));
    expect(paid?.links.length).toBe(1);
    expect(paid?.links[0]?.traceId).not.toBe(traceId);

    const delivered = receiver.deliveries.find((d) => d.payload.type === "order.paid");
    expect(delivered?.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  });
});
