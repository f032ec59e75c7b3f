import { describe, expect, it } from "vitest";
import { clientIp } from "../../src/buy/attempt";
import { buyEcho } from "../support/echo-routes";

/** The buy route's own description (schemas and body middleware) in front of a handler that echoes what passed. */
const echo = buyEcho();

async function send(body: string | undefined, headers: Record<string, string> = {}) {
  const res = await echo.request("/Yk3w0d1oVQm5Qm8wUu0fJm0S2o3m7m5a0b1c2d3e4f5", {
    method: "POST",
    body,
    headers,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("the buy route's request description", () => {
  it("reads quantity 1 from an empty body or an object without quantity, whatever the Content-Type", async () => {
    for (const body of [undefined, "", "  ", "{}"]) expect((await send(body)).body.quantity).toBe(1);
    expect((await send('{"quantity":10000}')).body.quantity).toBe(10_000);
    expect((await send('{"quantity":3}', { "Content-Type": "text/plain;charset=UTF-8" })).body.quantity).toBe(
      3,
    );
    expect((await send('{"quantity":2}', { "Content-Type": "application/json" })).body.quantity).toBe(2);
    expect(
      (await send('{"quantity":4}', { "Content-Type": "application/x-www-form-urlencoded" })).body.quantity,
    ).toBe(4);
  });

  it.each([
    "{",
    "[]",
    "null",
    '"2"',
    "2",
    '{"quantity":0}',
    '{"quantity":-1}',
    '{"quantity":1.5}',
    '{"quantity":"2"}',
    '{"quantity":1e9}',
    '{"quantity":10001}',
    '{"quantity":null}',
    '{"quantity":true}',
    '{"quantity":[1]}',
    `{"quantity":1,"pad":"${"x".repeat(1100)}"}`,
  ])("refuses %s with 400 INVALID_REQUEST and says which input", async (body) => {
    const res = await send(body, { "Content-Type": "application/json" });
    expect(res.status).toBe(400);
    const error = res.body.error as { code: string; message: string; fields?: Record<string, string> };
    expect(error.code).toBe("INVALID_REQUEST");
    expect(error.message.length).toBeGreaterThan(5);
  });

  it("names quantity in fields", async () => {
    const res = await send('{"quantity":0}');
    expect(res.body).toEqual({
      error: {
        code: "INVALID_REQUEST",
        message: "quantity must be an integer from 1 to 10000.",
        fields: { quantity: "quantity must be an integer from 1 to 10000." },
      },
    });
  });
});

describe("Idempotency-Key", () => {
  it("accepts visible ASCII up to 128 characters and absence", async () => {
    expect((await send(undefined)).body.key).toBeNull();
    expect((await send(undefined, { "Idempotency-Key": "click-1" })).body.key).toBe("click-1");
    expect((await send(undefined, { "Idempotency-Key": "k".repeat(128) })).body.key).toBe("k".repeat(128));
  });
  it.each(["", " ", "a b", "k".repeat(129), "cl\u00e9", "a\tb"])("refuses %j", async (key) => {
    const res = await send(undefined, { "Idempotency-Key": key });
    expect(res.status).toBe(400);
    expect((res.body.error as { fields: Record<string, string> }).fields).toHaveProperty("Idempotency-Key");
  });
});

describe("clientIp", () => {
  it("reads CF-Connecting-IP and falls back for anything unusable", () => {
    expect(clientIp("203.0.113.9")).toBe("203.0.113.9");
    expect(clientIp(undefined)).toBe("unknown");
    expect(clientIp("x".repeat(65))).toBe("unknown");
  });
});
