import { describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { ADMIN_TOKEN, shopperToken } from "../../support/shopper";
import { storesUnchanged } from "../../support/stores-unchanged";

/** The operator routes without the operator token: 401, and nothing changed. */
const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" } });

const code = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;
const unchanged = <T>(work: () => Promise<T>) => storesUnchanged(app, work);

describe("operator routes", () => {
  it("answer 401 on every route without the operator token, with a wrong one or a shopper's, changing nothing", async () => {
    const sale = await app.api.createSale({ stock: 5 });
    const routes: [string, string, unknown?][] = [
      ["GET", "/api/admin/sales"],
      ["POST", "/api/admin/sales", { productId: "x", name: "x", priceCents: 1, stock: 1, perUserLimit: 1 }],
      ["GET", `/api/admin/sales/${sale.saleId}`],
      ["GET", `/api/admin/sales/${sale.saleId}/stats`],
      ["GET", `/api/admin/sales/${sale.saleId}/timeline`],
      ["POST", `/api/admin/sales/${sale.saleId}/reconcile`],
      ["POST", `/api/admin/sales/${sale.saleId}/pause`],
      ["POST", `/api/admin/sales/${sale.saleId}/resume`],
      ["POST", `/api/admin/sales/${sale.saleId}/stock`, { delta: 100 }],
      ["GET", "/api/admin/dead-letters"],
    ];
    const shopper = await shopperToken("operator-wannabe");
    await unchanged(async () => {
      for (const [method, path, body] of routes) {
        for (const token of [
          undefined,
          "wrong-token",
          `${ADMIN_TOKEN}x`,
          ADMIN_TOKEN.slice(0, -1),
          shopper,
        ]) {
          const res = await app.api.call(method, path, {
            ...(token ? { token } : {}),
            ...(body ? { body } : {}),
          });
          expect([method, path, token, res.status, code(res.body)]).toEqual([
            method,
            path,
            token,
            401,
            "UNAUTHENTICATED",
          ]);
        }
        const basic = await app.api.call(method, path, {
          headers: { Authorization: `Basic ${ADMIN_TOKEN}` },
        });
        expect(basic.status).toBe(401);
      }
    });
  });
});
