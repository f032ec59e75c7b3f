/** The operator calls the bench needs: create a sale, read its stats (contract: operator routes). */

import type { SaleStats } from "../../src/recovery/sale-stats";

export type { SaleStats };

export type CreatedSale = { saleId: string; productToken: string };

export function operator(baseUrl: string, adminToken: string) {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${baseUrl}/api/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} /api/admin${path}: ${res.status} ${text}`);
    return JSON.parse(text) as T;
  };
  return {
    /** A live sale: started a second ago, open for a day, payment window of an hour (nothing expires). */
    createSale(productId: string, stock: number, perUserLimit: number): Promise<CreatedSale> {
      const now = Date.now();
      return call<CreatedSale>("POST", "/sales", {
        productId,
        name: `Benchmark ${productId}`,
        priceCents: 4_900,
        stock,
        perUserLimit,
        startsAt: new Date(now - 1_000).toISOString(),
        endsAt: new Date(now + 24 * 3_600_000).toISOString(),
        paymentWindowSeconds: 3_600,
      });
    },
    /**
     * A live drop: one variant per entry of `variants` (each `units`, priced alike), `perUserLimit` across
     * the drop, and a payment window of `paymentWindowSeconds`.
     */
    createDrop(
      productId: string,
      variants: string[],
      units: number,
      o: { perUserLimit: number; paymentWindowSeconds: number },
    ): Promise<CreatedSale> {
      const now = Date.now();
      return call<CreatedSale>("POST", "/sales", {
        productId,
        name: `Benchmark ${productId}`,
        variants: variants.map((variantId) => ({
          variantId,
          name: variantId,
          priceCents: 12_900,
          stock: units,
        })),
        perUserLimit: o.perUserLimit,
        startsAt: new Date(now - 1_000).toISOString(),
        endsAt: new Date(now + 24 * 3_600_000).toISOString(),
        paymentWindowSeconds: o.paymentWindowSeconds,
      });
    },
    stats: (saleId: string) => call<SaleStats>("GET", `/sales/${saleId}/stats`),
    /** Adds (or removes) units of a live sale. */
    adjust: (saleId: string, delta: number) => call<unknown>("POST", `/sales/${saleId}/stock`, { delta }),
    /** Registers a webhook endpoint for `events`; resolves its id. */
    addWebhook: async (url: string, events: string[]) =>
      (await call<{ endpointId: string }>("POST", "/webhooks", { url, events })).endpointId,
    removeWebhook: async (endpointId: string) => {
      const res = await fetch(`${baseUrl}/api/admin/webhooks/${endpointId}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${adminToken}` },
      });
      if (res.status !== 204) throw new Error(`DELETE /api/admin/webhooks/${endpointId}: ${res.status}`);
    },
  };
}
