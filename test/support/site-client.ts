/**
 * What an e2e test does to the site besides driving the browser: create sales, mint shopper tokens
 * through the dev login, buy in bursts, read stats — plain fetch, as a script or a shop back end would,
 * each answer checked against the OpenAPI document (see openapi-check.ts).
 */
import { exampleSecrets } from "../../local/worker-runtime";
import { saleDefinition } from "./api";
import { checkedFetch } from "./openapi-check";

export const ADMIN_TOKEN = exampleSecrets().ADMIN_TOKEN as string;

export type SaleBody = {
  saleId: string;
  productToken: string;
  startsAt: string;
  stock: number;
  [k: string]: unknown;
};
export type Stats = {
  remaining: number;
  stock: number;
  queued: number;
  awaitingPayment: number;
  paid: number;
  invariantHolds: boolean;
};

export function siteClient(baseUrl: string) {
  const admin = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await checkedFetch(`${baseUrl}/api/admin${path}`, {
      method,
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} /api/admin${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };

  async function login(userId: string): Promise<string> {
    const res = await checkedFetch(`${baseUrl}/api/dev/login`, {
      method: "POST",
      body: JSON.stringify({ userId }),
    });
    if (!res.ok) throw new Error(`dev login: ${res.status}`);
    return ((await res.json()) as { token: string }).token;
  }

  return {
    login,
    /** A sale live from one second ago unless `overrides` say otherwise. */
    createSale(overrides: Record<string, unknown> = {}): Promise<SaleBody> {
      return admin<SaleBody>(
        "POST",
        "/sales",
        saleDefinition({ name: "Aero Runner Sneakers", priceCents: 12900, ...overrides }),
      );
    },
    stats: (saleId: string) => admin<Stats>("GET", `/sales/${saleId}/stats`),
    adminSales: () => admin<{ sales: SaleBody[] }>("GET", "/sales"),
    async buy(productToken: string, token: string, quantity = 1): Promise<number> {
      const res = await checkedFetch(`${baseUrl}/api/buy/${productToken}`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Idempotency-Key": crypto.randomUUID() },
        body: JSON.stringify({ quantity }),
      });
      await res.arrayBuffer();
      return res.status;
    },
  };
}

export type SiteClient = ReturnType<typeof siteClient>;
