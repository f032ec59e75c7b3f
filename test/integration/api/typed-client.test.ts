import { describe, expect, it } from "vitest";
import { operatorClient, type SaleDefinition, shopperClient } from "../../../client";
import { saleDefinition } from "../../support/api";
import { appForFile } from "../../support/app-per-file";
import { ADMIN_TOKEN, shopperToken } from "../../support/shopper";

/**
 * Issue 18 item 4: the typed client (client/) as shop code would use it, against the running engine:
 * create a sale, list it, buy under an Idempotency-Key (a retry gets the same order), wait for the order,
 * pay, cancel, read the figures, and the engine's refusals as values.
 */
const app = appForFile();

describe("the typed client against the engine", () => {
  it("walks the sale, order and operator flows", async () => {
    const baseUrl = app.worker.url;
    const ops = operatorClient({ baseUrl }, ADMIN_TOKEN);
    const created = await ops.createSale(saleDefinition({ stock: 5, perUserLimit: 3 }) as SaleDefinition);
    if (!created.ok) throw new Error(JSON.stringify(created.error));
    expect(created.status).toBe(201);
    const { saleId, productToken } = created.value;

    let tokensAsked = 0;
    const shop = shopperClient({ baseUrl }, () => {
      tokensAsked++;
      return shopperToken("client-user");
    });
    const listed = await shop.listSales();
    expect(listed.ok && listed.value.sales.some((s) => s.saleId === saleId)).toBe(true);
    const sale = await shop.getSale(saleId);
    expect(sale.ok && sale.value.productToken).toBe(productToken);

    const first = await shop.buy(productToken, { quantity: 2 });
    if (!first.ok) throw new Error(JSON.stringify(first.error));
    expect(first.value).toMatchObject({ status: "queued", quantity: 2 });
    const replay = await shop.buy(productToken, { quantity: 2, idempotencyKey: first.idempotencyKey });
    expect(replay.ok && replay.value.orderId).toBe(first.value.orderId);

    const ready = await shop.awaitOrder(first.value.orderId, { timeoutMs: 30_000 });
    expect(ready.ok && ready.value.status).toBe("awaiting_payment");
    const paid = await shop.pay(first.value.orderId);
    expect(paid.ok && paid.value.status).toBe("paid");

    const second = await shop.buy(productToken);
    if (!second.ok) throw new Error(JSON.stringify(second.error));
    const cancelled = await shop.cancel(second.value.orderId);
    expect(cancelled.ok && cancelled.value.status).toBe("cancelled");
    const again = await shop.cancel(first.value.orderId);
    expect(again).toMatchObject({ ok: false, error: { status: 409, code: "ORDER_PAID" } });

    await app.drain();
    const stats = await ops.stats(saleId);
    if (!stats.ok) throw new Error(JSON.stringify(stats.error));
    expect(stats.value).toMatchObject({
      stock: 5,
      remaining: 3,
      paid: 1,
      cancelled: 1,
      invariantHolds: true,
    });
    const adjusted = await ops.adjustStock(saleId, 2);
    expect(adjusted.ok).toBe(true);
    expect(tokensAsked).toBeGreaterThanOrEqual(7);
  });

  it("gives the engine's refusals as values: status, code, details", async () => {
    const baseUrl = app.worker.url;
    const shop = shopperClient({ baseUrl }, await shopperToken("client-refused"));
    const unknown = await shop.buy("not-a-product-token");
    expect(unknown).toMatchObject({ ok: false, error: { status: 404, code: "UNKNOWN_PRODUCT" } });
    const stranger = shopperClient({ baseUrl }, "not-a-jwt");
    expect(await stranger.listSales()).toMatchObject({ ok: true });
    expect(await stranger.readOrder("sale-x-order")).toMatchObject({
      ok: false,
      error: { status: 401, code: "UNAUTHENTICATED" },
    });
    const ops = operatorClient({ baseUrl }, "wrong-admin-token");
    expect(await ops.stats("nope")).toMatchObject({
      ok: false,
      error: { status: 401, code: "UNAUTHENTICATED" },
    });
    const sold = await operatorClient({ baseUrl }, ADMIN_TOKEN).createSale(
      saleDefinition({ stock: 1, perUserLimit: 1 }) as SaleDefinition,
    );
    if (!sold.ok) throw new Error(JSON.stringify(sold.error));
    expect((await shop.buy(sold.value.productToken)).ok).toBe(true);
    const over = await shop.buy(sold.value.productToken, { quantity: 1 });
    expect(over).toMatchObject({ ok: false, error: { status: 409 } });
    expect(over.ok || over.error.details.code).toBe("ALREADY_PURCHASED");
  });
});
