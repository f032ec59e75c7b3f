import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver";

/** QStash deliveries to the engine, counted by job route. */
const deliveries = new Map<string, number>();
const countingFetch: typeof fetch = (input, init) => {
  const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
  deliveries.set(path, (deliveries.get(path) ?? 0) + 1);
  return fetch(input, init);
};

const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" }, qstashFetch: countingFetch });

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

const ORDERS = 40;

/** Buys ORDERS units at once (the isolate batches them), waits for the pipeline, and counts its jobs. */
async function rush(tag: string) {
  deliveries.clear();
  const sale = await app.api.createSale({ stock: ORDERS, perUserLimit: 1 });
  const answers = await Promise.all(
    Array.from({ length: ORDERS }, (_, i) => app.api.buy(sale.productToken, `${tag}-${i}`, 1)),
  );
  expect(answers.every((a) => a.status === 202)).toBe(true);
  await app.drain(30_000);
  const { rows } = await app.db.query("select count(*)::int as n from orders where sale_id = $1", [
    sale.saleId,
  ]);
  expect(rows[0]?.n).toBe(ORDERS);
  return {
    orderWrites: deliveries.get("/api/jobs/order-write") ?? 0,
    webhookJobs: deliveries.get("/api/jobs/webhook-delivery") ?? 0,
  };
}

describe("what webhooks cost", () => {
  it("nothing without an endpoint; with one, a delivery job per order-write batch, not per order", async () => {
    const without = await rush("cost-none");
    const { rows } = await app.db.query("select count(*)::int as n from webhook_outbox");
    expect([without.webhookJobs, rows[0]?.n]).toEqual([0, 0]);

    const created = await app.api.admin<{ secret: string; endpointId: string }>("POST", "/webhooks", {
      url: receiver.url,
      events: ["order.reserved", "order.awaiting_payment"],
    });
    receiver.trust(created.body.secret);
    const withOne = await rush("cost-one");
    expect(withOne.webhookJobs).toBeGreaterThan(0);
    // per order-write statement that inserted orders, one delivery job per 50 messages (both events of
    // each order): a batch of more than 25 orders takes two
    const jobsPerWrite = Math.ceil((2 * ORDERS) / 50);
    expect(withOne.webhookJobs).toBeLessThanOrEqual(withOne.orderWrites * jobsPerWrite);
    expect(new Set(receiver.accepted().map((d) => d.id)).size).toBe(2 * ORDERS);
    console.log(
      `webhook cost per order: ${ORDERS} orders in ${withOne.orderWrites} order-write job(s); ` +
        `${withOne.webhookJobs} delivery job(s) = ${(withOne.webhookJobs / ORDERS).toFixed(3)} QStash message(s) per order ` +
        `for 2 events per order (without an endpoint: ${without.webhookJobs})`,
    );
  });
});
