import { describe, expect, it } from "vitest";
import { operatorEcho } from "../support/echo-routes";
import { INVALID_SALE_DEFINITION } from "../support/sale-definitions";

/** The operator routes' own descriptions (schemas and body middleware) in front of handlers that echo what passed. */
const echo = operatorEcho();

type ErrorBody = { error: { code: string; message: string; fields?: Record<string, string> } };

async function send(path: string, body: string | undefined, headers: Record<string, string> = {}) {
  const res = await echo.request(path, { method: "POST", body, headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & Partial<ErrorBody> };
}

const definition = {
  productId: " hoodie-1 ",
  name: "Studio Hoodie",
  priceCents: 7900,
  stock: 120,
  perUserLimit: 2,
  startsAt: "2030-01-01T10:00:00Z",
  endsAt: "2030-01-01T12:00:00+01:00",
  paymentWindowSeconds: 600,
};
const createSale = (body: unknown, headers?: Record<string, string>) =>
  send("/sales", typeof body === "string" ? body : JSON.stringify(body), headers);

describe("the sale definition (POST /sales)", () => {
  it("passes a valid definition on with times as ms and text trimmed, whatever the Content-Type", async () => {
    for (const type of ["application/json", "text/plain;charset=UTF-8"]) {
      const res = await createSale(definition, { "Content-Type": type });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        ...definition,
        productId: "hoodie-1",
        startsAt: Date.parse("2030-01-01T10:00:00Z"),
        endsAt: Date.parse("2030-01-01T11:00:00Z"),
        admission: "open",
        proofOfWork: false,
      });
    }
  });

  it("names every bad field in `fields`, worded for the operator page", async () => {
    const res = await createSale(INVALID_SALE_DEFINITION);
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe("INVALID_REQUEST");
    expect(res.body.error?.fields).toEqual({
      productId: "Enter a product id.",
      priceCents: "The price must be at least 0.",
      stock: "The stock must be a whole number.",
      perUserLimit: "The limit per customer must be at least 1.",
      startsAt: "Enter a date and time (ISO 8601, e.g. 2026-12-01T10:00:00Z).",
      paymentWindowSeconds: "The payment window must be at least 1.",
    });
  });

  it("words a missing field as the form shows it", async () => {
    const res = await createSale({ stock: -5 });
    expect(res.body.error?.fields).toMatchObject({
      name: "Enter a name.",
      productId: "Enter a product id.",
      priceCents: "The price must be a number.",
      stock: "The stock must be at least 0.",
    });
  });

  it("refuses a sale that ends before it starts, on endsAt", async () => {
    const res = await createSale({ ...definition, endsAt: "2029-12-31T00:00:00Z" });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: "INVALID_REQUEST",
      message: "The sale must end after it starts.",
      fields: { endsAt: "The sale must end after it starts." },
    });
  });

  it.each(["{", "[]", "null", "2", '"x"'])("refuses the body %s as a whole", async (body) => {
    const res = await createSale(body);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.error?.fields ?? {})).toEqual(["body"]);
  });

  it("refuses a body over 16 KiB", async () => {
    const res = await createSale({ ...definition, name: "x".repeat(17 * 1024) });
    expect([res.status, res.body.error?.code]).toEqual([400, "INVALID_REQUEST"]);
  });
});

describe("the stock adjustment (POST /sales/{saleId}/stock)", () => {
  const adjust = (body: string, headers?: Record<string, string>) =>
    send("/sales/s4k2x9q1m0abc/stock", body, headers);

  it("passes a non-zero whole delta and the Idempotency-Key on", async () => {
    expect((await adjust('{"delta":5}')).body).toEqual({ delta: 5, key: null });
    expect((await adjust('{"delta":-10000000}', { "Idempotency-Key": "k-1" })).body).toEqual({
      delta: -10_000_000,
      key: "k-1",
    });
  });

  it.each([
    '{"delta":0}',
    '{"delta":1.5}',
    '{"delta":"2"}',
    '{"delta":null}',
    '{"delta":10000001}',
    "{}",
    "",
  ])("refuses %s with delta in fields", async (body) => {
    const res = await adjust(body);
    expect([res.status, res.body.error?.code]).toEqual([400, "INVALID_REQUEST"]);
    expect(res.body.error?.fields).toHaveProperty("delta");
  });

  it.each(["", "a b", "k".repeat(129)])("refuses the Idempotency-Key %j", async (key) => {
    const res = await adjust('{"delta":1}', { "Idempotency-Key": key });
    expect(res.status).toBe(400);
    expect(res.body.error?.fields).toHaveProperty("Idempotency-Key");
  });
});
