import { Client } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../../local/ports";
import { startTlsProxy, type TlsProxy, throwawayCertificate, trustingFetch } from "../../../local/tls-proxy";
import { type ApiClient, apiClient } from "../../support/api";
import { type AppUnderTest, startApp, testRuntime } from "../../support/app";
import { ADMIN_TOKEN } from "../../support/shopper";

/**
 * Deployed as the README says: the server behind a TLS-terminating proxy that forwards plain HTTP with
 * X-Forwarded-For (PUBLIC_URL=https://…, TRUST_PROXY_HEADER=X-Forwarded-For). QStash signs the https URL
 * it was given; the engine sees http://… and must verify against the URL it published to. Shoppers and
 * QStash (the stand-in, trusting the proxy's throwaway certificate) both come through the proxy.
 */
const runtime = testRuntime();

describe(`on ${runtime} behind a TLS-terminating proxy`, () => {
  let proxy: TlsProxy;
  let app: AppUnderTest;
  let shop: ApiClient;
  let https: typeof fetch;

  beforeAll(async () => {
    const cert = throwawayCertificate();
    https = trustingFetch(cert.cert);
    proxy = await startTlsProxy({ cert });
    app = await startApp({
      publicUrl: proxy.url,
      qstashFetch: https,
      vars: { TRUST_PROXY_HEADER: "X-Forwarded-For" },
    });
    proxy.setTarget(app.worker.url);
    shop = apiClient(proxy.url, { fetch: https, checkAt: app.worker.url });
  });
  afterAll(async () => {
    await app?.stop();
    await proxy?.close();
  });

  it("a buy through the proxy is written to Postgres: deliveries to the https URL are accepted", async () => {
    const sale = await app.api.createSale({ stock: 10 });
    const orderIds: string[] = [];
    for (const user of ["tls-1", "tls-2", "tls-3"]) {
      const buy = await shop.buy(sale.productToken, user, 1);
      expect(buy.status).toBe(202);
      orderIds.push((buy.body as { orderId: string }).orderId);
    }
    await app.drain();
    const { rows } = await app.db.query<{ id: string; status: string }>(
      "select id, status from orders where id = any($1) order by id",
      [orderIds],
    );
    expect(rows.map((r) => r.status)).toEqual(["awaiting_payment", "awaiting_payment", "awaiting_payment"]);
    expect(app.stack.qstash.delivered.failed).toBe(0);
    expect(app.stack.qstash.dlq()).toEqual([]);
    const read = await shop.order(orderIds[0] as string, "tls-1");
    expect([read.status, (read.body as { status?: string }).status]).toEqual([200, "awaiting_payment"]);
    expect(proxy.forwarded()).toBeGreaterThanOrEqual(5);
  });

  it("a failure callback through the proxy records the dead letter", async () => {
    // a job its route refuses (400: an empty batch), no retries: QStash then calls the failure callback
    const qstash = new Client({ token: app.stack.vars.QSTASH_TOKEN, baseUrl: app.stack.vars.QSTASH_URL });
    const { messageId } = await qstash.publishJSON({
      url: `${proxy.url}/api/jobs/order-write`,
      body: { orders: [] },
      retries: 0,
      failureCallback: `${proxy.url}/api/jobs/failed`,
    });
    await app.drain();
    const dlq = app.stack.qstash.dlq().find((d) => d.messageId === messageId);
    expect(dlq?.responseStatus).toBe(400);
    await waitFor(
      async () => {
        const res = await app.api.call<{ deadLetters: { messageId: string }[] }>(
          "GET",
          "/api/admin/dead-letters",
          { token: ADMIN_TOKEN },
        );
        return res.body.deadLetters.some((d) => d.messageId === messageId);
      },
      { timeoutMs: 5_000, what: "the dead letter recorded by the failure callback" },
    );
  });
});
