import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { checkSale } from "../../../chaos/checker";
import { type RecordingClient, recordingClient } from "../../../chaos/client";
import { History, type Op } from "../../../chaos/history";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { deliverJob } from "../../support/jobs";

/**
 * Model-based test of the order state machine: random sequences of buy, retry with the same
 * Idempotency-Key, order-write delivery (duplicated, in any order), pay, cancel, payment timeout and
 * waiting, run against the worker on real servers (QStash paused: the test delivers every job itself)
 * and against a small model. Expiry is decided by Postgres's clock: the model knows each order's window
 * and accepts either answer within MARGIN_MS of its end, then follows what happened.
 */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "10000", SOLD_OUT_CACHE_MS: "0" } });
beforeAll(() => {
  app.stack.qstash.pause();
});

const MARGIN_MS = 300;
const USERS = ["ann", "bob", "cy"];
const STOCK = 3;
const LIMIT = 2;

type Status = "queued" | "awaiting_payment" | "paid" | "expired" | "cancelled";
type MOrder = {
  orderId: string;
  userId: string;
  quantity: number;
  status: Status;
  expiresAt: number;
  job: unknown;
};
type Model = {
  remaining: number;
  held: Record<string, number>;
  orders: MOrder[];
  keyed: { userId: string; key: string; quantity: number; status: number; code?: string; orderId?: string }[];
  waited: boolean;
  windowMs: number;
};
type Real = { saleId: string; productToken: string; client: RecordingClient };

/** What acting on a final order answers: the error code, or the status of a 200 body. */
const FINAL_ANSWER: Record<"pay" | "cancel", Partial<Record<Status, string>>> = {
  pay: { paid: "paid", expired: "ORDER_EXPIRED", cancelled: "ORDER_CANCELLED" },
  cancel: { paid: "ORDER_PAID", expired: "ORDER_EXPIRED", cancelled: "cancelled" },
};
const release = (m: Model, o: MOrder, to: "expired" | "cancelled") => {
  o.status = to;
  m.remaining += o.quantity;
  m.held[o.userId] = (m.held[o.userId] ?? 0) - o.quantity;
};
/** "open", "closed" or "either" (too close to the window's end to say) by the test's clock. */
const windowState = (o: MOrder) => {
  const d = Date.now() - o.expiresAt;
  return d < -MARGIN_MS ? "open" : d > MARGIN_MS ? "closed" : "either";
};

async function assertStores(m: Model, r: Real) {
  const k = saleKeys(r.saleId);
  expect(Number(await app.redis.get(k.stock))).toBe(m.remaining);
  const held = await app.redis.hgetall(k.holdings);
  for (const u of USERS) expect(Number(held[u] ?? 0), `holdings of ${u}`).toBe(m.held[u] ?? 0);
}

const pick = (m: Model, i: number) => m.orders[i % m.orders.length] as MOrder;

class Buy implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly user: number,
    readonly quantity: number,
    readonly keyed: boolean,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const userId = USERS[this.user] as string;
    const held = m.held[userId] ?? 0;
    const expected =
      held >= LIMIT
        ? "ALREADY_PURCHASED"
        : held + this.quantity > LIMIT
          ? "LIMIT_EXCEEDED"
          : m.remaining <= 0
            ? "SOLD_OUT"
            : m.remaining < this.quantity
              ? "INSUFFICIENT_STOCK"
              : "reserved";
    const key = this.keyed ? `${userId}-${m.keyed.length}` : undefined;
    const op = await r.client.buy(r.productToken, userId, this.quantity, key);
    expect(op.code ?? "reserved").toBe(expected);
    if (key)
      m.keyed.push({ userId, key, quantity: this.quantity, status: op.status as number, ...pickAnswer(op) });
    if (expected === "reserved") {
      const orderId = op.orderId as string;
      const job = JSON.parse((await app.redis.hget(saleKeys(r.saleId).orders, orderId)) as string);
      m.orders.push({
        orderId,
        userId,
        quantity: this.quantity,
        status: "queued",
        expiresAt: job.expiresAt,
        job: { ...job, saleId: r.saleId },
      });
      m.remaining -= this.quantity;
      m.held[userId] = held + this.quantity;
    }
    await assertStores(m, r);
  }
  toString = () => `buy(${USERS[this.user]}, ${this.quantity}${this.keyed ? ", keyed" : ""})`;
}

const pickAnswer = (op: Op) => ({
  ...(op.code ? { code: op.code } : {}),
  ...(op.orderId ? { orderId: op.orderId } : {}),
});

class Retry implements fc.AsyncCommand<Model, Real> {
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>) => m.keyed.length > 0;
  async run(m: Model, r: Real) {
    const first = m.keyed[this.i % m.keyed.length] as Model["keyed"][number];
    const op = await r.client.buy(r.productToken, first.userId, first.quantity, first.key);
    expect([op.status, op.code, op.orderId]).toEqual([first.status, first.code, first.orderId]);
    await assertStores(m, r);
  }
  toString = () => `retry(#${this.i})`;
}

class DeliverWrite implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly i: number,
    readonly times: number,
  ) {}
  check = (m: Readonly<Model>) => m.orders.length > 0;
  async run(m: Model, r: Real) {
    const o = pick(m, this.i);
    const results = await Promise.all(
      Array.from({ length: this.times }, () => deliverJob(app, "/api/jobs/order-write", o.job)),
    );
    for (const res of results) expect(res.status).toBe(200);
    if (o.status === "queued") o.status = "awaiting_payment";
    await assertStores(m, r);
  }
  toString = () => `deliverWrite(#${this.i} ×${this.times})`;
}

class Act implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly action: "pay" | "cancel" | "timeout",
    readonly i: number,
  ) {}
  check = (m: Readonly<Model>) => m.orders.length > 0;
  async run(m: Model, r: Real) {
    const o = pick(m, this.i);
    const when = windowState(o);
    const open = o.status === "queued" || o.status === "awaiting_payment";
    if (this.action === "timeout") {
      const res = await deliverJob(app, "/api/jobs/payment-timeout", o.job);
      if (open) {
        const expired = res.status === 200;
        if (when !== "either") expect(expired).toBe(when === "closed");
        if (expired) release(m, o, "expired");
        else {
          expect(res.status).toBe(409);
          o.status = "awaiting_payment";
        }
      } else expect(res.status).toBe(200);
    } else if (this.action === "cancel") {
      const op = await r.client.act("cancel", o.orderId, o.userId);
      if (open) {
        expect(op.status).toBe(200);
        release(m, o, "cancelled");
      } else expect(op.code ?? op.orderStatus).toBe(FINAL_ANSWER.cancel[o.status]);
    } else {
      const op = await r.client.act("pay", o.orderId, o.userId);
      if (open) {
        const paid = op.status === 200;
        if (when !== "either")
          expect(paid ? "open" : op.code, `pay ${when}`).toBe(when === "open" ? "open" : "ORDER_EXPIRED");
        if (paid) o.status = "paid";
        else release(m, o, "expired");
      } else expect(op.code ?? op.orderStatus).toBe(FINAL_ANSWER.pay[o.status]);
    }
    const seen = await r.client.get(o.orderId, o.userId);
    expect(seen.orderStatus).toBe(o.status);
    await assertStores(m, r);
  }
  toString = () => `${this.action}(#${this.i})`;
}

class Wait implements fc.AsyncCommand<Model, Real> {
  check = (m: Readonly<Model>) => m.windowMs < 5_000 && !m.waited;
  async run(m: Model) {
    m.waited = true;
    await new Promise((resolve) => setTimeout(resolve, m.windowMs + 2 * MARGIN_MS));
  }
  toString = () => "wait(window)";
}

const commands = [
  fc.tuple(fc.nat(2), fc.integer({ min: 1, max: 3 }), fc.boolean()).map(([u, q, k]) => new Buy(u, q, k)),
  fc.nat(20).map((i) => new Retry(i)),
  fc.tuple(fc.nat(20), fc.integer({ min: 1, max: 2 })).map(([i, n]) => new DeliverWrite(i, n)),
  fc
    .tuple(
      fc.constantFrom("pay", "cancel", "timeout") as fc.Arbitrary<"pay" | "cancel" | "timeout">,
      fc.nat(20),
    )
    .map(([a, i]) => new Act(a, i)),
  fc.constant(new Wait()),
];

describe("the order state machine against a model", () => {
  it("agrees with the model on every step, and the checker finds nothing at the end", {
    timeout: 120_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(1, 1, 600),
        fc.commands(commands, { maxCommands: 14 }),
        async (windowSeconds, cmds) => {
          const sale = await app.api.createSale({
            stock: STOCK,
            perUserLimit: LIMIT,
            paymentWindowSeconds: windowSeconds,
          });
          const history = new History();
          const real: Real = {
            saleId: sale.saleId,
            productToken: sale.productToken,
            client: recordingClient(app.worker.url, history),
          };
          const model: Model = {
            remaining: STOCK,
            held: {},
            orders: [],
            keyed: [],
            waited: false,
            windowMs: windowSeconds * 1000,
          };
          await fc.asyncModelRun(() => ({ model, real }), cmds);
          for (const o of model.orders) await deliverJob(app, "/api/jobs/order-write", o.job);
          for (const id of app.stack.qstash.scheduler.messageIds()) app.stack.qstash.scheduler.cancel(id);
          const result = await checkSale(app, sale.saleId, history.toJSON());
          expect(result.violations).toEqual([]);
        },
      ),
      { numRuns: 25 },
    );
  });
});
