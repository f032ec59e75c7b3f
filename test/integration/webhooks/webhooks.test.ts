import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebhookReceiver as startDevReceiver } from "../../../local/webhook-receiver";
import { webhookEventTypes } from "../../../src/webhooks/event-types";
import { appForFile } from "../../support/app-per-file";
import { ADMIN_TOKEN } from "../../support/shopper";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver";

const app = appForFile({
  vars: { RATE_LIMIT_USER_PER_WINDOW: "1000", OUTBOX_GRACE_SECONDS: "1", WEBHOOK_DELIVERY_RETRIES: "8" },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const code = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

type Created = { endpointId: string; url: string; events: string[]; secret: string };

async function register(events: readonly string[] = webhookEventTypes): Promise<Created> {
  const res = await app.api.admin<Created>("POST", "/webhooks", { url: receiver.url, events });
  expect(res.status).toBe(201);
  receiver.trust(res.body.secret);
  return res.body;
}

/** Waits until `check` holds over the deliveries the receiver accepted. */
async function until<T>(what: string, check: () => T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const found = check();
    if (found) return found;
    await sleep(100);
  }
  throw new Error(
    `never saw ${what}: ${JSON.stringify(receiver.deliveries.map((d) => [d.payload.type, d.answered]))}`,
  );
}

/** Accepted deliveries about one order or sale, one per webhook-id (redeliveries dropped), by version. */
function eventsOf(resourceId: string) {
  const seen = new Map<string, { type: string; version: number; data: Record<string, unknown> }>();
  for (const d of receiver.accepted()) {
    const data = d.payload.data;
    if (data.orderId !== resourceId && !(data.saleId === resourceId && data.orderId === undefined)) continue;
    seen.set(d.id, { type: d.payload.type, version: Number(data.version), data });
  }
  return [...seen.values()].sort((a, b) => a.version - b.version);
}

const typesOf = (resourceId: string) => eventsOf(resourceId).map((e) => e.type);

describe("webhooks to the shop", () => {
  it("operators register, list, test, rotate and remove endpoints; bad input and unknown ids change nothing", async () => {
    const before = (await app.api.admin<{ endpoints: unknown[] }>("GET", "/webhooks")).body.endpoints.length;
    for (const body of [
      { url: "ftp://shop.example/hooks", events: ["order.paid"] },
      { url: "not a url", events: ["order.paid"] },
      { url: receiver.url, events: ["order.shipped"] },
      { url: receiver.url, events: [] },
      { url: receiver.url },
      { url: receiver.url, events: ["order.paid"], secret: "whsec_mine" },
      ["order.paid"],
    ]) {
      const res = await app.api.admin("POST", "/webhooks", body);
      expect([res.status, code(res.body)], JSON.stringify(body)).toEqual([400, "INVALID_REQUEST"]);
    }
    const noToken = await app.api.call("POST", "/api/admin/webhooks", {
      body: { url: receiver.url, events: ["order.paid"] },
    });
    expect(noToken.status).toBe(401);
    expect((await app.api.admin<{ endpoints: unknown[] }>("GET", "/webhooks")).body.endpoints).toHaveLength(
      before,
    );

    const created = await register(["order.paid", "sale.paused"]);
    expect(created).toMatchObject({ url: receiver.url, events: ["order.paid", "sale.paused"] });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{40,}={0,2}$/);
    const listed = await app.api.admin<{ endpoints: Record<string, unknown>[] }>("GET", "/webhooks");
    const mine = listed.body.endpoints.find((e) => e.endpointId === created.endpointId);
    expect(mine).toMatchObject({ url: receiver.url, events: ["order.paid", "sale.paused"] });
    expect(JSON.stringify(listed.body)).not.toContain("whsec_");

    const test = await app.api.admin<{ msgId: string }>("POST", `/webhooks/${created.endpointId}/test`);
    expect(test.status).toBe(202);
    const first = await until("the test event", () =>
      receiver.accepted().find((d) => d.id === test.body.msgId),
    );
    expect(first.payload).toMatchObject({ type: "webhook.test", data: { endpointId: created.endpointId } });
    expect(first.verifiedWith).toEqual([created.secret]);

    const rotated = await app.api.admin<{ secret: string }>("POST", `/webhooks/${created.endpointId}/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.secret);
    receiver.trust(created.secret, rotated.body.secret);
    const second = await app.api.admin<{ msgId: string }>("POST", `/webhooks/${created.endpointId}/test`);
    const overlap = await until("a test event after rotation", () =>
      receiver.accepted().find((d) => d.id === second.body.msgId),
    );
    // during the overlap each secret verifies the delivery on its own
    expect(overlap.verifiedWith.sort()).toEqual([created.secret, rotated.body.secret].sort());
    expect(overlap.signature.split(" ")).toHaveLength(2);

    for (const forged of ["ep_000000000000000000000000", "ep_zzz", "nope", "..%2F..%2Fsales"]) {
      for (const [method, path] of [
        ["DELETE", `/webhooks/${forged}`],
        ["POST", `/webhooks/${forged}/test`],
        ["POST", `/webhooks/${forged}/rotate`],
      ] as const) {
        const res = await app.api.admin(method, path);
        expect([res.status, code(res.body)], `${method} ${path}`).toEqual([404, "NOT_FOUND"]);
      }
    }
    const removed = await app.api.admin("DELETE", `/webhooks/${created.endpointId}`);
    expect(removed.status).toBe(204);
    expect((await app.api.admin("DELETE", `/webhooks/${created.endpointId}`)).status).toBe(404);
    expect((await app.api.admin("POST", `/webhooks/${created.endpointId}/test`)).status).toBe(404);
  });

  it("a secret rotated out keeps verifying for 24 hours, however many rotations follow", async () => {
    const created = await register(["sale.paused"]);
    const rotate = () =>
      app.api.admin<{ secret: string; error?: { code: string } }>(
        "POST",
        `/webhooks/${created.endpointId}/rotate`,
      );
    const delivered = async (what: string) => {
      const test = await app.api.admin<{ msgId: string }>("POST", `/webhooks/${created.endpointId}/test`);
      return until(what, () => receiver.accepted().find((d) => d.id === test.body.msgId));
    };
    try {
      const first = await rotate();
      const second = await rotate();
      expect([first.status, second.status]).toEqual([200, 200]);
      receiver.trust(created.secret, first.body.secret, second.body.secret);
      const afterTwo = await delivered("a test event after two rotations");
      // a receiver still holding the original secret (rotated out a moment ago) verifies the delivery
      expect(afterTwo.verifiedWith.sort()).toEqual(
        [created.secret, first.body.secret, second.body.secret].sort(),
      );
      expect(afterTwo.signature.split(" ")).toHaveLength(3);

      // at most 4 rotated-out secrets sign at once: a fifth rotation within their 24 h is refused (a
      // secret handed out keeps its 24 h), and says when the oldest lapses
      const third = await rotate();
      const fourth = await rotate();
      expect([third.status, fourth.status]).toEqual([200, 200]);
      const refused = await rotate();
      expect([refused.status, code(refused.body)]).toEqual([409, "CONFLICT"]);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(86_000);
      const all = [created, first.body, second.body, third.body, fourth.body].map((r) => r.secret);
      receiver.trust(...all);
      const afterFour = await delivered("a test event signed by five secrets");
      expect(afterFour.verifiedWith.sort()).toEqual([...all].sort());

      // once the oldest's 24 h are over it no longer signs, and a rotation is taken again
      await app.db.query(
        `update webhook_endpoints set retired_secrets = jsonb_set(retired_secrets, '{0,expiresAt}',
           to_jsonb(to_char((now() - interval '1 second') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
         where id = $1`,
        [created.endpointId],
      );
      const lapsed = await delivered("a test event after the oldest secret lapsed");
      expect(lapsed.verifiedWith.sort()).toEqual(all.slice(1).sort());
      expect((await rotate()).status).toBe(200);
    } finally {
      await app.api.admin("DELETE", `/webhooks/${created.endpointId}`);
    }
  });

  it("every change of orders and sales reaches the endpoint, signed, with increasing versions", async () => {
    const endpoint = await register();
    const firstDelivery = receiver.deliveries.length;
    try {
      const sale = await app.api.createSale({
        stock: 5,
        priceCents: 700,
        perUserLimit: 5,
        // long enough to pay and cancel after the order writes on a loaded machine (3 s was not: 409)
        paymentWindowSeconds: 8,
      });
      const paidBuy = await app.api.buy(sale.productToken, "hook-pay", 2);
      const cancelBuy = await app.api.buy(sale.productToken, "hook-cancel", 1);
      const expireBuy = await app.api.buy(sale.productToken, "hook-expire", 2);
      const [paidId, cancelId, expireId] = [paidBuy, cancelBuy, expireBuy].map((r) =>
        String(r.body.orderId),
      ) as [string, string, string];
      await until("the orders written", () =>
        [paidId, cancelId, expireId].every((id) => typesOf(id).includes("order.awaiting_payment")),
      );
      expect((await app.api.order(paidId, "hook-pay", "pay")).status).toBe(200);
      expect((await app.api.order(cancelId, "hook-cancel", "cancel")).status).toBe(200);
      await until("order.paid", () => typesOf(paidId).includes("order.paid"));
      await until("order.cancelled", () => typesOf(cancelId).includes("order.cancelled"));
      await until("order.expired", () => typesOf(expireId).includes("order.expired"));

      expect(typesOf(paidId)).toEqual(["order.reserved", "order.awaiting_payment", "order.paid"]);
      expect(typesOf(cancelId)).toEqual(["order.reserved", "order.awaiting_payment", "order.cancelled"]);
      expect(typesOf(expireId)).toEqual(["order.reserved", "order.awaiting_payment", "order.expired"]);
      const paid = eventsOf(paidId);
      expect(paid.map((e) => e.version)).toEqual([1, 2, 3]);
      expect(paid.map((e) => e.data.status)).toEqual(["queued", "awaiting_payment", "paid"]);
      expect(paid[2]?.data).toMatchObject({ orderId: paidId, saleId: sale.saleId, quantity: 2 });
      expect(typeof paid[2]?.data.paidAt).toBe("string");
      expect(paid[0]?.data).not.toHaveProperty("paidAt");
      // the expired order's units are back: 5 - 2 paid (the restore follows the transition that wrote
      // order.expired, so it may land a moment after the event)
      let stats = (await app.api.stats(sale.saleId)).body;
      for (let i = 0; i < 50 && stats.remaining !== 3; i++) {
        await new Promise((r) => setTimeout(r, 100));
        stats = (await app.api.stats(sale.saleId)).body;
      }
      expect(stats).toMatchObject({ remaining: 3 });

      expect((await app.api.admin("POST", `/sales/${sale.saleId}/pause`)).status).toBe(200);
      expect((await app.api.admin("POST", `/sales/${sale.saleId}/resume`)).status).toBe(200);
      const adjusted = await app.api.call("POST", `/api/admin/sales/${sale.saleId}/stock`, {
        token: ADMIN_TOKEN,
        body: { delta: 4 },
      });
      expect(adjusted.status).toBe(200);
      await until("the sale events", () => typesOf(sale.saleId).includes("sale.stock_adjusted"));
      // (sale.live at creation and sale.sold_out after the third order are the next test's subject)
      const operatorTypes = ["sale.paused", "sale.resumed", "sale.stock_adjusted"];
      const saleEvents = eventsOf(sale.saleId).filter((e) => operatorTypes.includes(e.type));
      expect(saleEvents.map((e) => e.type)).toEqual(operatorTypes);
      expect(saleEvents[0]?.data).toMatchObject({ saleId: sale.saleId, status: "paused" });
      expect(saleEvents[2]?.data).toMatchObject({ stock: 9, remaining: 7, productToken: sale.productToken });
      const versions = saleEvents.map((e) => e.version);
      expect(versions).toEqual([...versions].sort((a, b) => a - b));
      expect(new Set(versions).size).toBe(3);
      // every delivery, redeliveries included, verified with the endpoint's secret
      const mine = receiver.deliveries.slice(firstDelivery);
      expect(mine.length).toBeGreaterThanOrEqual(12);
      for (const d of mine) expect(d.verifiedWith, d.body).toEqual([endpoint.secret]);
    } finally {
      await app.api.admin("DELETE", `/webhooks/${endpoint.endpointId}`);
    }
  });

  it("an endpoint down for a while gets every event once it is back (at least once, nothing lost)", async () => {
    const endpoint = await register([
      "order.reserved",
      "order.awaiting_payment",
      "sale.paused",
      "sale.resumed",
    ]);
    try {
      const sale = await app.api.createSale({ stock: 10, perUserLimit: 10 });
      receiver.down(true);
      const orderIds: string[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await app.api.buy(sale.productToken, `hook-outage-${i}`, 1);
        expect(res.status).toBe(202);
        orderIds.push(String(res.body.orderId));
      }
      expect((await app.api.admin("POST", `/sales/${sale.saleId}/pause`)).status).toBe(200);
      await until(
        "failed deliveries",
        () => receiver.deliveries.filter((d) => d.answered === 500).length >= 3,
      );
      await sleep(2_000);
      receiver.down(false);
      expect((await app.api.admin("POST", `/sales/${sale.saleId}/resume`)).status).toBe(200);
      await until(
        "every event",
        () => orderIds.every((id) => typesOf(id).length === 2) && typesOf(sale.saleId).length === 2,
      );
      for (const id of orderIds) expect(typesOf(id)).toEqual(["order.reserved", "order.awaiting_payment"]);
      expect(typesOf(sale.saleId)).toEqual(["sale.paused", "sale.resumed"]);
      const { rows } = await app.db.query("select count(*)::int as n from webhook_outbox");
      expect(rows[0]?.n).toBe(0);
    } finally {
      receiver.down(false);
      await app.api.admin("DELETE", `/webhooks/${endpoint.endpointId}`);
    }
  });

  it("a sale going live, selling out and ending is announced once each (at creation, by the order write, by the sweep)", async () => {
    const endpoint = await register(["sale.live", "sale.sold_out", "sale.ended"]);
    try {
      const endsAt = Date.now() + 6_000;
      const sale = await app.api.createSale({ stock: 1, endsAt: new Date(endsAt).toISOString() });
      await until("sale.live", () => typesOf(sale.saleId).includes("sale.live"));
      expect((await app.api.buy(sale.productToken, "hook-last-unit", 1)).status).toBe(202);
      await until("sale.sold_out", () => typesOf(sale.saleId).includes("sale.sold_out"));
      await app.worker.scheduled();
      await sleep(Math.max(0, endsAt - Date.now()) + 500);
      await app.worker.scheduled();
      await until("sale.ended", () => typesOf(sale.saleId).includes("sale.ended"));
      await app.worker.scheduled();
      await sleep(500);
      expect(typesOf(sale.saleId)).toEqual(["sale.live", "sale.sold_out", "sale.ended"]);
      expect(eventsOf(sale.saleId).map((e) => e.data.status)).toEqual(["live", "sold_out", "ended"]);
    } finally {
      await app.api.admin("DELETE", `/webhooks/${endpoint.endpointId}`);
    }
  });

  it("the sweep announces no status a sale lost while it ran: versions follow the states they describe", async () => {
    const endpoint = await register(["sale.live", "sale.sold_out"]);
    const lock = await app.db.connect();
    try {
      const sale = await app.api.createSale({ stock: 2, perUserLimit: 3 });
      await until("sale.live", () => typesOf(sale.saleId).includes("sale.live"));
      // an adjustment in the sale's ledger: the sweep's reconciliation reads stock_adjustments for it
      const adjusted = await app.api.call("POST", `/api/admin/sales/${sale.saleId}/stock`, {
        token: ADMIN_TOKEN,
        body: { delta: 1 },
      });
      expect(adjusted.status).toBe(200);
      // the sweep reads every sale (this one live, 3 left), then waits in its reconciliation...
      await lock.query("begin");
      await lock.query("lock table stock_adjustments in access exclusive mode");
      const sweeping = app.worker.scheduled();
      const waiting = async () =>
        Number(
          (
            await app.db.query(
              "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query ilike '%stock_adjustments%'",
            )
          ).rows[0]?.n,
        ) > 0;
      for (let i = 0; i < 100 && !(await waiting()); i++) await sleep(50);
      expect(await waiting()).toBe(true);
      // ...while the sale sells out, which the order write announces
      expect((await app.api.buy(sale.productToken, "hook-gap", 3)).status).toBe(202);
      await until("sale.sold_out", () => typesOf(sale.saleId).includes("sale.sold_out"));
      await lock.query("rollback");
      await sweeping;
      await app.drain();
      await sleep(500);
      // the last version a receiver keeps is the sale as it is: sold out, nothing left
      const events = eventsOf(sale.saleId);
      expect(events.map((e) => e.type)).toEqual(["sale.live", "sale.sold_out"]);
      expect(events.at(-1)?.data).toMatchObject({ status: "sold_out", remaining: 0 });
    } finally {
      await lock.query("rollback").catch(() => {});
      lock.release();
      await app.api.admin("DELETE", `/webhooks/${endpoint.endpointId}`);
    }
  });

  it("concurrent pauses and resumes: the highest version describes the state the sale is left in", async () => {
    const endpoint = await register(["sale.live", "sale.paused", "sale.resumed"]);
    try {
      const sale = await app.api.createSale({ stock: 5 });
      await until("sale.live", () => typesOf(sale.saleId).includes("sale.live"));
      // (a round whose requests leave the sale as it was announces nothing: the last event still holds)
      for (let round = 0; round < 8; round++) {
        const answers = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            app.api.admin("POST", `/sales/${sale.saleId}/${i % 2 === 0 ? "pause" : "resume"}`),
          ),
        );
        expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
        const final = await app.api.admin<{ status: string }>("GET", `/sales/${sale.saleId}`);
        await app.drain();
        await sleep(300);
        const events = eventsOf(sale.saleId);
        const versions = events.map((e) => e.version);
        expect(new Set(versions).size).toBe(versions.length);
        expect(
          events.at(-1)?.data.status,
          `round ${round}: ${JSON.stringify(events.map((e) => [e.type, e.version, e.data.status]))}`,
        ).toBe(final.body.status);
      }
    } finally {
      await app.api.admin("DELETE", `/webhooks/${endpoint.endpointId}`);
    }
  });

  it("a delivery QStash gave up on is a dead letter the operator replays", async () => {
    const endpoint = await register(["sale.paused"]);
    try {
      const job = {
        endpointId: endpoint.endpointId,
        messages: [
          {
            msgId: "msg_replayed_1",
            payload: { type: "webhook.test", timestamp: new Date().toISOString(), data: {} },
          },
        ],
      };
      // what the failure callback records once retries are exhausted (POST /api/jobs/failed)
      const { rows } = await app.db.query<{ id: number }>(
        "insert into dead_letters (message_id, url, status, body) values ($1, $2, 502, $3) returning id",
        [`dlq-${endpoint.endpointId}`, `${app.worker.url}/api/jobs/webhook-delivery`, JSON.stringify(job)],
      );
      const id = Number(rows[0]?.id);
      const listed = await app.api.admin<{ deadLetters: { id: number }[] }>("GET", "/dead-letters");
      expect(listed.body.deadLetters.map((d) => d.id)).toContain(id);
      expect((await app.api.admin("POST", "/dead-letters/999999999/replay")).status).toBe(404);
      const replayed = await app.api.admin("POST", `/dead-letters/${id}/replay`);
      expect([replayed.status, replayed.body]).toEqual([200, { replayed: true }]);
      await until("the replayed delivery", () => receiver.accepted().find((d) => d.id === "msg_replayed_1"));
      const after = await app.api.admin<{ deadLetters: { id: number }[] }>("GET", "/dead-letters");
      expect(after.body.deadLetters.map((d) => d.id)).not.toContain(id);
    } finally {
      await app.api.admin("DELETE", `/webhooks/${endpoint.endpointId}`);
    }
  });

  it("the OpenAPI document describes every event type in its webhooks section", async () => {
    const doc = (await app.api.call("GET", "/api/openapi.json")).body as {
      webhooks?: Record<string, unknown>;
    };
    expect(Object.keys(doc.webhooks ?? {}).sort()).toEqual([...webhookEventTypes, "webhook.test"].sort());
    for (const type of webhookEventTypes) expect(doc.webhooks?.[type]).toHaveProperty("post.requestBody");
  });

  it("the dev stack's receiver registers itself, verifies each delivery and prints it", async () => {
    const lines: string[] = [];
    const dev = await startDevReceiver(app.worker.url, ADMIN_TOKEN, { port: 0, log: (l) => lines.push(l) });
    try {
      const sale = await app.api.createSale({ stock: 3 });
      expect((await app.api.admin("POST", `/sales/${sale.saleId}/pause`)).status).toBe(200);
      await until("the printed event", () =>
        lines.find((l) => l.includes(`sale.paused ${sale.saleId} paused`)),
      );
      expect(lines.filter((l) => l.includes("did not verify"))).toEqual([]);
    } finally {
      await dev.close();
      await app.api.admin("DELETE", `/webhooks/${dev.endpointId}`);
    }
  });
});
