import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { qstashJobsSeen } from "../../support/qstash-jobs-seen";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver";

const jobs = qstashJobsSeen();

const INLINE_POSTS = 4;
const app = appForFile({
  vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", WEBHOOK_INLINE_POSTS: String(INLINE_POSTS) },
  qstashFetch: jobs.fetch,
});

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

const ORDERS = 40;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("an order write's inline POSTs", () => {
  it("are at most WEBHOOK_INLINE_POSTS per job (a Worker's subrequests): the rest reach the endpoint through QStash's jobs", async () => {
    const created = await app.api.admin<{ secret: string }>("POST", "/webhooks", {
      url: receiver.url,
      events: ["order.reserved", "order.awaiting_payment"],
    });
    receiver.trust(created.body.secret);
    const sale = await app.api.createSale({ stock: ORDERS, perUserLimit: 1 });
    const answers = await Promise.all(
      Array.from({ length: ORDERS }, (_, i) => app.api.buy(sale.productToken, `limit-${i}`, 1)),
    );
    expect(answers.every((a) => a.status === 202)).toBe(true);
    const accepted = () =>
      new Set(
        receiver
          .accepted()
          .filter((d) => d.payload.data.saleId === sale.saleId)
          .map((d) => d.id),
      ).size;
    const deadline = Date.now() + 30_000;
    while (accepted() < 2 * ORDERS && Date.now() < deadline) await sleep(100);
    expect(accepted()).toBe(2 * ORDERS);
    // the messages QStash carried (each job once, by its deduplication id's rows)
    const handed = new Set<string>();
    for (const body of jobs.webhookJobBodies) {
      const job = JSON.parse(body) as { messages: { msgId: string }[] };
      for (const m of job.messages) handed.add(m.msgId);
    }
    const orderWrites = jobs.count("/api/jobs/order-write");
    expect(orderWrites).toBeGreaterThan(0);
    expect(handed.size).toBeGreaterThanOrEqual(2 * ORDERS - INLINE_POSTS * orderWrites);
    // the cap was exercised: the writes' events exceed what they may POST themselves (batches vary with load)
    expect(2 * ORDERS - INLINE_POSTS * orderWrites).toBeGreaterThan(0);
  });
});
