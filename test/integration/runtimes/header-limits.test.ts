import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppUnderTest, startApp, testRuntime } from "../../support/app";
import { ADMIN_TOKEN, shopperToken } from "../../support/shopper";

/**
 * Oversized request headers get one answer on every runtime (the contract: the same status and body
 * everywhere), not each HTTP server's own refusal (Bun's empty 431 past 16 KiB, Deno's empty 400 past
 * 64 KiB): a long bearer token under the cap is a bad token (401), and headers past 32 KiB in all are
 * 431 HEADERS_TOO_LARGE with the contract's error body, before any route reads anything.
 */
const runtime = testRuntime();
const TOO_LARGE = {
  error: {
    code: "HEADERS_TOO_LARGE",
    message: "The request's headers are larger than 32 KiB.",
    requestId: expect.any(String),
  },
};
const kib = (n: number, ch = "x") => ch.repeat(n * 1024);

describe(`request headers past what the API takes (${runtime})`, () => {
  let app: AppUnderTest;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  it("a 20 KiB bearer token is a bad token: 401 UNAUTHENTICATED", async () => {
    const res = await app.api.call("GET", "/api/orders/o-none", { token: kib(20) });
    expect([res.status, (res.body as { error: { code: string } }).error.code]).toEqual([
      401,
      "UNAUTHENTICATED",
    ]);
  });

  it("many headers within 32 KiB are served", async () => {
    const headers = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`x-extra-${i}`, kib(0.3)]));
    expect((await app.api.call("GET", "/api/sales", { headers })).status).toBe(200);
  });

  it("headers past 32 KiB: 431 HEADERS_TOO_LARGE with the contract's body, whatever the route; nothing reserved", async () => {
    const sale = await app.api.createSale({ stock: 3 });
    const token = await shopperToken("big-headers");
    const cases = [
      app.api.call("POST", `/api/buy/${sale.productToken}`, {
        token: `${token}${kib(40)}`,
        body: { quantity: 1 },
      }),
      app.api.call("POST", `/api/buy/${sale.productToken}`, {
        token,
        body: { quantity: 1 },
        headers: { Cookie: kib(60) },
      }),
      app.api.call("GET", "/api/sales", { headers: { "X-Forwarded-For": kib(33, "1") } }),
      app.api.call("GET", "/api/admin/sales", { token: ADMIN_TOKEN, headers: { "X-Note": kib(40) } }),
      app.api.call("GET", `/api/orders/o-none`, {
        headers: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x-extra-${i}`, kib(1)])),
      }),
    ];
    for (const res of await Promise.all(cases)) {
      expect(res.status).toBe(431);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(JSON.parse(res.text)).toEqual(TOO_LARGE);
    }
    const stats = await app.api.stats(sale.saleId);
    expect((stats.body as { remaining: number }).remaining).toBe(3);
  });
});
