import { describe, expect, it } from "vitest";
import { testRuntime } from "../../support/app";
import { appForFile } from "../../support/app-per-file";
import { ADMIN_TOKEN, shopperToken } from "../../support/shopper";

/**
 * The contract's request id: every response carries `X-Request-Id` (the caller's when well formed, else a
 * new one), and every error body names the same id in `error.requestId`, on every runtime: answers of
 * the app, of its error handler, and of the buy's front door.
 */
const app = appForFile();

async function send(path: string, init: RequestInit = {}) {
  const res = await fetch(`${app.worker.url}${path}`, init);
  const text = await res.text();
  return { res, id: res.headers.get("X-Request-Id"), body: text ? JSON.parse(text) : undefined };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe(`request ids (${testRuntime()})`, () => {
  it("gives every answer a new id when the caller sent none, a different one each time", async () => {
    const a = await send("/api/health");
    const b = await send("/api/sales");
    const c = await send("/api/no-such-route");
    expect([a.res.status, b.res.status, c.res.status]).toEqual([200, 200, 404]);
    for (const { id } of [a, b, c]) expect(id).toMatch(UUID);
    expect(new Set([a.id, b.id, c.id]).size).toBe(3);
    expect(c.body.error).toEqual({ code: "NOT_FOUND", message: "No such route.", requestId: c.id });
  });

  it("keeps the caller's well-formed id, in the header and in the error body", async () => {
    const sent = "Root=1-67891233-abcdef012345678912345678:edge/4.2_x";
    const r = await send("/api/admin/sales", { headers: { "X-Request-Id": sent } });
    expect(r.res.status).toBe(401);
    expect(r.id).toBe(sent);
    expect(r.body.error).toMatchObject({ code: "UNAUTHENTICATED", requestId: sent });
  });

  it("replaces an id that is not well formed: too long, spaces, quotes, empty", async () => {
    for (const sent of ["x".repeat(129), "two words", 'quo"te', "<script>", ""]) {
      const r = await send("/api/orders/o-none", { headers: { "X-Request-Id": sent } });
      expect(r.res.status).toBe(401);
      expect(r.id).toMatch(UUID);
      expect(r.body.error.requestId).toBe(r.id);
    }
  });

  it("names the id in a 400 the buy route renders for a body it cannot read", async () => {
    const token = await shopperToken("req-id-1");
    const bad = await send("/api/buy/x", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "X-Request-Id": "bad-body-1" },
      body: "{",
    });
    expect([bad.res.status, bad.body.error.code, bad.body.error.requestId]).toEqual([
      400,
      "INVALID_REQUEST",
      "bad-body-1",
    ]);
  });

  it("answers the buy's front-door refusals (404 from the Bloom filter, 410 from memory) with the id too", async () => {
    const sale = await app.api.createSale({ stock: 1, perUserLimit: 1 });
    expect((await app.api.buy(sale.productToken, "req-id-2", 1)).status).toBe(202);
    expect((await app.api.buy(sale.productToken, "req-id-3", 1)).status).toBe(410); // the process learns it
    const buy = async (token: string, requestId?: string) =>
      send(`/api/buy/${token}`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${await shopperToken("req-id-4")}`,
          ...(requestId ? { "X-Request-Id": requestId } : {}),
        },
        body: '{"quantity":1}',
      });
    const soldOut = await buy(sale.productToken, "sold-out-1");
    expect([soldOut.res.status, soldOut.id, soldOut.body.error.requestId]).toEqual([
      410,
      "sold-out-1",
      "sold-out-1",
    ]);
    const unknown = await buy("Q".repeat(43));
    expect(unknown.res.status).toBe(404);
    expect(unknown.id).toMatch(UUID);
    expect(unknown.body.error).toEqual({
      code: "UNKNOWN_PRODUCT",
      message: "No sale is selling this product.",
      requestId: unknown.id,
    });
    const other = await buy("Q".repeat(43));
    expect(other.id).not.toBe(unknown.id);
  });

  it("answers operator routes and successes with an id", async () => {
    const res = await fetch(`${app.worker.url}/api/admin/webhooks`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "X-Request-Id": "op-1" },
    });
    expect([res.status, res.headers.get("X-Request-Id")]).toEqual([200, "op-1"]);
  });
});
