import { afterEach, describe, expect, it, vi } from "vitest";
import { signDelivery } from "../../local/qstash-delivery";
import { MAX_QUANTITY } from "../../src/api/buy-schemas";
import {
  failureCallbackSchema,
  MAX_ORDERS_PER_JOB,
  orderJobSchema,
  voidJobSchema,
} from "../../src/api/job-schemas";
import { createApp } from "../../src/app";
import { newOrderId, newSaleId } from "../../src/ids";
import type { Services } from "../../src/services";

const saleId = newSaleId();
const order = (o: Record<string, unknown> = {}) => ({
  orderId: newOrderId(saleId),
  saleId,
  userId: "u-1",
  quantity: 1,
  createdAt: 1_767_261_600_000,
  expiresAt: 1_767_261_900_000,
  ...o,
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("order job bodies (order-write, payment-timeout)", () => {
  it("a bare order is a job of one order, its epoch 1 when absent and extra fields dropped", () => {
    const fields = order();
    expect(orderJobSchema.parse({ ...fields, note: "extra" })).toEqual([{ ...fields, epoch: 1 }]);
    expect(orderJobSchema.parse({ orders: [order({ epoch: 3 })] })[0]?.epoch).toBe(3);
  });

  it("a batch with entries that are not orders goes on without them, and logs how many were left out", () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const good = [order(), order({ quantity: MAX_QUANTITY })];
    const bad = [
      null,
      "x",
      order({ quantity: 0 }),
      order({ quantity: MAX_QUANTITY + 1 }),
      order({ createdAt: 1e300 }),
      order({ expiresAt: undefined }),
      order({ epoch: 0 }),
      order({ epoch: null }),
      order({ userId: "" }),
      order({ userId: "u".repeat(129) }),
      order({ orderId: newOrderId(newSaleId()) }),
    ];
    const parsed = orderJobSchema.parse({ orders: [bad[0], good[0], ...bad.slice(1), good[1]] });
    expect(parsed.map((o) => o.orderId)).toEqual(good.map((o) => o.orderId));
    expect(log).toHaveBeenCalledWith(`job: ${bad.length} entries are not orders; the rest go on`);
  });

  it("1 to 50 orders: 50 are taken, 51 are refused even when one of them is not an order", () => {
    const fifty = Array.from({ length: MAX_ORDERS_PER_JOB }, () => order());
    expect(orderJobSchema.parse({ orders: fifty })).toHaveLength(MAX_ORDERS_PER_JOB);
    expect(orderJobSchema.safeParse({ orders: [...fifty, order()] }).success).toBe(false);
    expect(orderJobSchema.safeParse({ orders: [...fifty, null] }).success).toBe(false);
  });

  it("a job with no order at all is refused", () => {
    for (const body of [
      null,
      7,
      [],
      {},
      { orders: [] },
      { orders: [null] },
      { orders: "x" },
      order({ quantity: 0 }),
    ])
      expect([body, orderJobSchema.safeParse(body).success]).toEqual([body, false]);
  });
});

describe("void and failure-callback job bodies", () => {
  it("a void names a buy attempt: its key a visible-ASCII string or null, never absent", () => {
    const attempt = { saleId, orderId: newOrderId(saleId), userId: "u-1", quantity: 2 };
    expect(voidJobSchema.parse({ ...attempt, idempotencyKey: null })).toEqual({
      ...attempt,
      idempotencyKey: null,
    });
    expect(voidJobSchema.parse({ ...attempt, idempotencyKey: "k-1" }).idempotencyKey).toBe("k-1");
    for (const bad of [
      { ...attempt },
      { ...attempt, idempotencyKey: "a b" },
      { ...attempt, idempotencyKey: null, saleId: newSaleId() },
    ])
      expect(voidJobSchema.safeParse(bad).success).toBe(false);
  });

  it("a failure callback is any JSON object; fields of another type than QStash's are ignored", () => {
    expect(failureCallbackSchema.parse({ sourceMessageId: "m1", status: 500, retried: 3 })).toEqual({
      sourceMessageId: "m1",
      status: 500,
    });
    expect(failureCallbackSchema.parse({ sourceMessageId: 7, status: "500", url: null })).toEqual({});
    for (const body of [null, [], "x"]) expect(failureCallbackSchema.safeParse(body).success).toBe(false);
  });
});

describe("job routes", () => {
  const keys = {
    QSTASH_CURRENT_SIGNING_KEY: "sig_current",
    QSTASH_NEXT_SIGNING_KEY: "sig_next",
    PUBLIC_URL: "http://localhost",
  };
  // only the signature check and the body's schema run: a request that reaches a store fails the test
  const app = createApp({
    services: () => ({ config: keys, clock: () => Date.now() }) as unknown as Services,
    defer: () => () => {},
    clientIp: () => undefined,
  });
  const deliver = async (path: string, body: unknown, signingKey = keys.QSTASH_CURRENT_SIGNING_KEY) => {
    const url = `http://localhost/api/jobs/${path}`;
    const raw = JSON.stringify(body);
    const signature = await signDelivery({ signingKey, url, body: new TextEncoder().encode(raw) });
    const res = await app.request(url, {
      method: "POST",
      headers: { "Upstash-Signature": signature },
      body: raw,
    });
    return { status: res.status, body: (await res.json()) as { error: { code: string; fields?: object } } };
  };

  it("check the signature first: a malformed body with a bad signature is 401", async () => {
    const res = await deliver("order-write", { orders: [] }, "not-the-key");
    expect([res.status, res.body.error.code]).toEqual([401, "UNAUTHENTICATED"]);
  });

  it("then refuse a body their schema refuses with the contract's 400 and fields", async () => {
    const cases: [string, unknown][] = [
      ["order-write", { orders: [] }],
      ["order-write", { orders: Array.from({ length: MAX_ORDERS_PER_JOB + 1 }, () => order()) }],
      ["payment-timeout", order({ quantity: 0 })],
      ["payment-timeout", { orders: [null] }],
      ["void-reservation", { ...order(), idempotencyKey: undefined }],
      ["failed", null],
    ];
    for (const [path, body] of cases) {
      const res = await deliver(path, body);
      expect([path, res.status, res.body.error.code]).toEqual([path, 400, "INVALID_REQUEST"]);
      expect(res.body.error.fields, path).toBeTypeOf("object");
    }
  });
});
