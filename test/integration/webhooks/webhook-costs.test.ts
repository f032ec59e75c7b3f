import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INLINE_BUDGET_MS, INLINE_REST_MS } from "../../../src/webhooks/deliver-inline";
import { appForFile } from "../../support/app-per-file";
import { qstashJobsSeen } from "../../support/qstash-jobs-seen";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver";

const jobs = qstashJobsSeen();

const app = appForFile({
  vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", OUTBOX_GRACE_SECONDS: "1", WEBHOOK_DELIVERY_RETRIES: "8" },
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

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never saw ${what}`);
    await sleep(100);
  }
}

const outboxRows = async () =>
  (await app.db.query<{ n: number }>("select count(*)::int as n from webhook_outbox")).rows[0]?.n;

/** Accepted deliveries of a sale's orders, one per webhook-id. */
const acceptedIds = (saleId: string, by: WebhookReceiver = receiver) =>
  new Set(
    by
      .accepted()
      .filter((d) => d.payload.data.saleId === saleId)
      .map((d) => d.id),
  );

/** Buys ORDERS units at once (the isolate batches them), waits for the pipeline, and counts its jobs. */
async function rush(tag: string) {
  jobs.clear();
  const sale = await app.api.createSale({ stock: ORDERS, perUserLimit: 1 });
  const answers = await Promise.all(
    Array.from({ length: ORDERS }, (_, i) => app.api.buy(sale.productToken, `${tag}-${i}`, 1)),
  );
  expect(answers.every((a) => a.status === 202)).toBe(true);
  // not app.drain(): it would wait out the retries of delivery jobs to an endpoint that is down
  await until("the orders written", async () => {
    const { rows } = await app.db.query<{ n: number }>(
      "select count(*)::int as n from orders where sale_id = $1",
      [sale.saleId],
    );
    return rows[0]?.n === ORDERS;
  });
  return {
    saleId: sale.saleId,
    orderWrites: () => jobs.count("/api/jobs/order-write"),
    /** delivery jobs QStash brought carrying this sale's events (its retries included), to one endpoint or any */
    webhookJobs: (endpointId = "") =>
      jobs.webhookJobBodies.filter((b) => b.includes(sale.saleId) && b.includes(endpointId)).length,
  };
}

describe("what webhooks cost", () => {
  it("nothing without an endpoint; with one that answers, each order's events POSTed by the order write itself, no QStash hop", async () => {
    const without = await rush("cost-none");
    expect([without.webhookJobs(), await outboxRows()]).toEqual([0, 0]);

    const created = await app.api.admin<{ secret: string; endpointId: string }>("POST", "/webhooks", {
      url: receiver.url,
      events: ["order.reserved", "order.awaiting_payment"],
    });
    receiver.trust(created.body.secret);
    try {
      const withOne = await rush("cost-one");
      await until("both events of every order", () => acceptedIds(withOne.saleId).size === 2 * ORDERS);
      await until("the outbox emptied", async () => (await outboxRows()) === 0);
      // delivered from the order-write job: not one QStash message for them
      expect(withOne.webhookJobs()).toBe(0);
      // in order per order: reserved (version 1) before awaiting payment (version 2)
      const received = receiver.accepted().filter((d) => d.payload.data.saleId === withOne.saleId);
      for (const d of received.filter((x) => x.payload.type === "order.awaiting_payment")) {
        const first = received.findIndex(
          (x) => x.payload.data.orderId === d.payload.data.orderId && x.payload.type === "order.reserved",
        );
        expect(first).toBeGreaterThanOrEqual(0);
        expect(first).toBeLessThan(received.indexOf(d));
      }
      console.log(
        `webhook cost per order: ${ORDERS} orders in ${withOne.orderWrites()} order-write job(s); ` +
          `${withOne.webhookJobs()} delivery job(s) for 2 events per order`,
      );
    } finally {
      await app.api.admin("DELETE", `/webhooks/${created.body.endpointId}`);
    }
  });

  it("an endpoint that fails an inline POST gets the rest through QStash's retried jobs, and every event once it is back", async () => {
    const created = await app.api.admin<{ secret: string; endpointId: string }>("POST", "/webhooks", {
      url: receiver.url,
      events: ["order.reserved", "order.awaiting_payment"],
    });
    receiver.trust(created.body.secret);
    try {
      receiver.down(true);
      const failed = await rush("cost-down");
      // the inline POST failed: the rest went to QStash as delivery jobs, retried while the endpoint is down
      await until("delivery jobs", () => failed.webhookJobs() > 0);
      receiver.down(false);
      // the endpoint answers again, but rests from inline delivery in this process for INLINE_REST_MS:
      // a new write's events go through QStash (without the rest they would be POSTed inline, no job)
      expect(INLINE_REST_MS).toBeGreaterThan(10_000);
      const resting = await rush("cost-resting");
      await until("the resting endpoint's jobs", () => resting.webhookJobs() > 0);
      await until(
        "every event of both rushes",
        () =>
          acceptedIds(failed.saleId).size === 2 * ORDERS && acceptedIds(resting.saleId).size === 2 * ORDERS,
        45_000,
      ).catch((error: Error) => {
        throw new Error(
          `${error.message}: accepted ${acceptedIds(failed.saleId).size} and ${acceptedIds(resting.saleId).size} of ${2 * ORDERS}; delivery jobs ${failed.webhookJobs()} and ${resting.webhookJobs()}`,
        );
      });
      await until("the outbox emptied", async () => (await outboxRows()) === 0);
    } finally {
      receiver.down(false);
      await app.api.admin("DELETE", `/webhooks/${created.body.endpointId}`);
    }
  }, 90_000);

  it("a slow endpoint is cut at the inline budget, inside a job, and hands the rest to QStash; a fast one beside it is not held up", async () => {
    const slow = await startWebhookReceiver();
    const add = async (to: WebhookReceiver) => {
      const created = await app.api.admin<{ secret: string; endpointId: string }>("POST", "/webhooks", {
        url: to.url,
        events: ["order.reserved", "order.awaiting_payment"],
      });
      to.trust(created.body.secret);
      return created.body.endpointId;
    };
    const fastId = await add(receiver);
    const slowId = await add(slow);
    try {
      // 200 ms per POST: the slow endpoint's 80 messages (a job of 50, one of 30) would take 16 s inline
      slow.slow(200);
      const started = Date.now();
      const both = await rush("cost-slow");
      await until("the fast endpoint's events", () => acceptedIds(both.saleId).size === 2 * ORDERS);
      expect(both.webhookJobs(fastId)).toBe(0);
      // cut at the budget inside its first job (not after the job's 50 POSTs, 10 s): the rest goes to QStash
      await until(
        "the slow endpoint's leftovers handed to QStash",
        () => both.webhookJobs(slowId) > 0,
        15_000,
      );
      const handedAfter = Date.now() - started;
      expect(handedAfter).toBeLessThan(INLINE_BUDGET_MS + 3_500);
      slow.slow(0);
      await until(
        "the slow endpoint's events",
        () => acceptedIds(both.saleId, slow).size === 2 * ORDERS,
        45_000,
      );
      await until("the outbox emptied", async () => (await outboxRows()) === 0);
    } finally {
      slow.slow(0);
      await app.api.admin("DELETE", `/webhooks/${fastId}`);
      await app.api.admin("DELETE", `/webhooks/${slowId}`);
      await slow.close();
    }
  }, 90_000);
});
