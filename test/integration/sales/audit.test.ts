import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { awaitingOrder } from "../../support/payments";
import { ADMIN_TOKEN } from "../../support/shopper";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver";

const ALICE = "alice-token-0123456789";
const BOB = "bob-token-0123456789abc";
const GRAFANA = "grafana-token-0123456789";

const app = appForFile({
  vars: {
    PAYMENT_PROVIDER: "manual",
    RATE_LIMIT_USER_PER_WINDOW: "1000",
    OPERATOR_TOKENS: `alice:${ALICE}:admin,bob:${BOB}:admin,grafana:${GRAFANA}:read`,
  },
});

type Entry = {
  id: string;
  at: string;
  action: string;
  saleId?: string;
  target?: string;
  before?: unknown;
  after?: unknown;
  requestId: string;
  actor: string;
};

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

let requests = 0;
/** An operator request with its own X-Request-Id, answered with that id. */
async function as(token: string, method: string, path: string, body?: unknown) {
  const requestId = `audit-${Date.now()}-${++requests}`;
  const res = await app.api.call(method, `/api/admin${path}`, {
    token,
    headers: { "X-Request-Id": requestId },
    ...(body === undefined ? {} : { body }),
  });
  return { ...res, requestId };
}

const newest = async (query = "") =>
  (await app.api.call<{ entries: Entry[] }>("GET", `/api/admin/audit${query}`, { token: ADMIN_TOKEN })).body
    .entries;

/** Runs a change and returns the entries it appended (oldest first). */
async function appended(change: () => Promise<unknown>): Promise<Entry[]> {
  const top = (await newest("?limit=1"))[0]?.id ?? "0";
  await change();
  return (await newest("?limit=50")).filter((e) => BigInt(e.id) > BigInt(top)).reverse();
}

const saleBody = (overrides: Record<string, unknown> = {}) => {
  const now = Date.now();
  return {
    productId: `sku-audit-${now}-${Math.random().toString(36).slice(2, 8)}`,
    name: "Audited",
    priceCents: 1500,
    stock: 10,
    perUserLimit: 2,
    startsAt: new Date(now - 1000).toISOString(),
    endsAt: new Date(now + 3600_000).toISOString(),
    paymentWindowSeconds: 600,
    ...overrides,
  };
};

describe.sequential("who changed what", () => {
  it("each operator change appends one entry: actor, action, before, after and the request's id", async () => {
    let created: Awaited<ReturnType<typeof as>> | undefined;
    const [create, ...noMore] = await appended(async () => {
      created = await as(ALICE, "POST", "/sales", saleBody({ stock: 10 }));
    });
    expect(created?.status).toBe(201);
    const saleId = String(created?.body.saleId);
    expect(noMore).toEqual([]);
    expect(create).toMatchObject({
      action: "sale.create",
      actor: "alice",
      saleId,
      requestId: created?.requestId,
      after: { stock: 10, name: "Audited" },
    });
    expect(JSON.stringify(create)).not.toContain(ALICE);

    let stock: Awaited<ReturnType<typeof as>> | undefined;
    const stockEntries = await appended(async () => {
      stock = await as(BOB, "POST", `/sales/${saleId}/stock`, { delta: 5 });
    });
    expect(stock?.status).toBe(200);
    expect(stockEntries).toHaveLength(1);
    expect(stockEntries[0]).toMatchObject({
      action: "sale.stock",
      actor: "bob",
      saleId,
      requestId: stock?.requestId,
      before: { stock: 10, remaining: 10 },
      after: { stock: 15, remaining: 15, delta: 5 },
    });

    for (const action of ["pause", "resume"] as const) {
      let res: Awaited<ReturnType<typeof as>> | undefined;
      const entries = await appended(async () => {
        res = await as(ALICE, "POST", `/sales/${saleId}/${action}`);
      });
      expect(res?.status).toBe(200);
      expect(entries).toEqual([
        expect.objectContaining({
          action: `sale.${action}`,
          actor: "alice",
          saleId,
          requestId: res?.requestId,
          before: { paused: action === "resume" },
          after: { paused: action === "pause" },
        }),
      ]);
    }

    let reconcile: Awaited<ReturnType<typeof as>> | undefined;
    const reconciled = await appended(async () => {
      reconcile = await as(BOB, "POST", `/sales/${saleId}/reconcile`);
    });
    expect(reconcile?.status).toBe(200);
    expect(reconciled).toEqual([
      expect.objectContaining({
        action: "sale.reconcile",
        actor: "bob",
        saleId,
        requestId: reconcile?.requestId,
      }),
    ]);

    const { orderId } = await awaitingOrder(app, String(created?.body.productToken), "audit-shopper", 1);
    let paid: Awaited<ReturnType<typeof as>> | undefined;
    const payment = await appended(async () => {
      paid = await as(ALICE, "POST", `/orders/${orderId}/payment`, { paymentRef: "shop-7" });
    });
    expect(paid?.status).toBe(200);
    expect(payment).toEqual([
      expect.objectContaining({
        action: "order.payment",
        actor: "alice",
        saleId,
        target: orderId,
        requestId: paid?.requestId,
        before: { status: "awaiting_payment" },
        after: { status: "paid", paymentRef: "shop-7" },
      }),
    ]);
    // confirming again changes nothing, so nothing is appended
    expect(await appended(() => as(ALICE, "POST", `/orders/${orderId}/payment`, {}))).toEqual([]);

    const bySale = await newest(`?saleId=${saleId}`);
    expect(bySale.map((e) => e.action)).toEqual([
      "order.payment",
      "sale.reconcile",
      "sale.resume",
      "sale.pause",
      "sale.stock",
      "sale.create",
    ]);
    const page = await newest(`?saleId=${saleId}&limit=2&before=${bySale[1]?.id}`);
    expect(page.map((e) => e.action)).toEqual(["sale.resume", "sale.pause"]);
  });

  it("webhook endpoints, rotations and dead-letter replays are recorded, never with a secret", async () => {
    let made: Awaited<ReturnType<typeof as>> | undefined;
    const createdEntries = await appended(async () => {
      made = await as(BOB, "POST", "/webhooks", { url: receiver.url, events: ["sale.paused"] });
    });
    expect(made?.status).toBe(201);
    const endpointId = String(made?.body.endpointId);
    expect(createdEntries).toEqual([
      expect.objectContaining({
        action: "webhook.create",
        actor: "bob",
        target: endpointId,
        requestId: made?.requestId,
        after: { url: receiver.url, events: ["sale.paused"] },
      }),
    ]);
    let rotated: Awaited<ReturnType<typeof as>> | undefined;
    const rotation = await appended(async () => {
      rotated = await as(ALICE, "POST", `/webhooks/${endpointId}/rotate`);
    });
    expect(rotated?.status).toBe(200);
    expect(rotation).toEqual([
      expect.objectContaining({ action: "webhook.rotate", actor: "alice", target: endpointId }),
    ]);
    for (const secret of [made?.body.secret, rotated?.body.secret])
      expect(JSON.stringify(await newest())).not.toContain(String(secret));

    const { rows } = await app.db.query<{ id: string }>(
      "insert into dead_letters (message_id, url, status, body) values ($1, $2, 502, $3) returning id",
      [
        `dlq-audit-${endpointId}`,
        `${app.worker.url}/api/jobs/webhook-delivery`,
        JSON.stringify({ endpointId, messages: [] }),
      ],
    );
    const deadId = String(rows[0]?.id);
    let replay: Awaited<ReturnType<typeof as>> | undefined;
    const replays = await appended(async () => {
      replay = await as(ALICE, "POST", `/dead-letters/${deadId}/replay`);
    });
    expect(replay?.status).toBe(200);
    expect(replays).toEqual([
      expect.objectContaining({
        action: "dead_letter.replay",
        actor: "alice",
        target: deadId,
        requestId: replay?.requestId,
        before: expect.objectContaining({ status: 502 }),
      }),
    ]);

    let removed: Awaited<ReturnType<typeof as>> | undefined;
    const removal = await appended(async () => {
      removed = await as(BOB, "DELETE", `/webhooks/${endpointId}`);
    });
    expect(removed?.status).toBe(204);
    expect(removal).toEqual([
      expect.objectContaining({
        action: "webhook.delete",
        actor: "bob",
        target: endpointId,
        before: { url: receiver.url, events: ["sale.paused"] },
      }),
    ]);
    // a second delete finds nothing: 404, nothing appended
    expect(await appended(() => as(BOB, "DELETE", `/webhooks/${endpointId}`))).toEqual([]);
  });

  it("a read operator reads stats and the log, and is refused any change with nothing appended", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    expect((await as(GRAFANA, "GET", `/sales/${sale.saleId}/stats`)).status).toBe(200);
    expect((await as(GRAFANA, "GET", "/audit?limit=1")).status).toBe(200);
    const refused = await appended(async () => {
      for (const [method, path, body] of [
        ["POST", `/sales/${sale.saleId}/pause`, undefined],
        ["POST", `/sales/${sale.saleId}/stock`, { delta: 1 }],
        ["POST", "/sales", saleBody()],
        ["POST", "/webhooks", { url: receiver.url, events: ["sale.paused"] }],
      ] as const) {
        const res = await as(GRAFANA, method, path, body);
        expect([res.status, (res.body.error as { code?: string }).code], path).toEqual([403, "FORBIDDEN"]);
      }
    });
    expect(refused).toEqual([]);
    expect((await as("not-an-operator-token", "GET", "/audit")).status).toBe(401);
  });

  it("the chain verifies, and an entry changed behind the trigger's back breaks it at that entry", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    // concurrent changes each take the chain's lock: the chain stays one line
    const others = await Promise.all([1, 2, 3, 4, 5, 6].map(() => app.api.createSale({ stock: 1 })));
    await Promise.all(others.map((o, i) => as(i % 2 ? ALICE : BOB, "POST", `/sales/${o.saleId}/pause`)));
    await as(ALICE, "POST", `/sales/${sale.saleId}/pause`);
    await as(ALICE, "POST", `/sales/${sale.saleId}/resume`);
    const check = await app.api.call<{ ok: boolean; entries: number }>("GET", "/api/admin/audit/verify", {
      token: GRAFANA,
    });
    expect(check.body).toMatchObject({ ok: true });
    expect(check.body.entries).toBeGreaterThan(3);

    const [resume, pause] = await newest(`?saleId=${sale.saleId}&limit=2`);
    // the engine's own connection may neither change nor remove an entry
    await expect(
      app.db.query("update audit_log set actor = 'mallory' where id = $1", [pause?.id]),
    ).rejects.toThrow(/append-only/);
    await expect(app.db.query("delete from audit_log where id = $1", [pause?.id])).rejects.toThrow(
      /append-only/,
    );
    await expect(app.db.query("truncate audit_log")).rejects.toThrow(/append-only/);

    // a superuser who turns the triggers off can change a row, and the check names it
    const client = await app.db.connect();
    try {
      await client.query("begin");
      await client.query("set local session_replication_role = replica");
      await client.query("update audit_log set actor = 'mallory' where id = $1", [pause?.id]);
      await client.query("commit");
    } finally {
      client.release();
    }
    const broken = await app.api.call("GET", "/api/admin/audit/verify", { token: ADMIN_TOKEN });
    expect(broken.body).toMatchObject({ ok: false, brokenAt: pause?.id });
    expect(resume?.id).not.toBe(pause?.id);
    const mend = await app.db.connect();
    try {
      await mend.query("begin");
      await mend.query("set local session_replication_role = replica");
      await mend.query("update audit_log set actor = 'alice' where id = $1", [pause?.id]);
      await mend.query("commit");
    } finally {
      mend.release();
    }
    expect((await app.api.call("GET", "/api/admin/audit/verify", { token: ADMIN_TOKEN })).body).toMatchObject(
      {
        ok: true,
      },
    );
  });
});
