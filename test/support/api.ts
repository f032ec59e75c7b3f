import { checkExchange } from "./openapi-check";
import { ADMIN_TOKEN, shopperToken } from "./shopper";

/**
 * The contract's request id on an answer of the engine: an `X-Request-Id` header on every response,
 * and on an error the same id in the body's `error.requestId`.
 */
export function checkRequestId(headers: Headers, body: unknown): void {
  const id = headers.get("X-Request-Id");
  if (!id) throw new Error("the answer carries no X-Request-Id header");
  const error = (body as { error?: { requestId?: unknown } } | null)?.error;
  if (error && error.requestId !== id)
    throw new Error(`the error body's requestId ${String(error.requestId)} is not the header's ${id}`);
}

export type ApiResponse<T = Record<string, unknown>> = {
  status: number;
  body: T;
  headers: Headers;
  text: string;
};

/**
 * A small HTTP client for the worker, the way a shop's client code would call it. Every answer is
 * checked against the OpenAPI document the server publishes (see openapi-check.ts); `unchecked` (with
 * the reason) is only for a test that deliberately reads an answer that is not the engine's. Through a
 * proxy, `fetch` is the client's (one that trusts the proxy's certificate) and `checkAt` the engine's own
 * origin, where the document is read.
 */
export function apiClient(baseUrl: string, via: { fetch?: typeof fetch; checkAt?: string } = {}) {
  async function call<T = Record<string, unknown>>(
    method: string,
    path: string,
    opts: {
      token?: string;
      body?: unknown;
      rawBody?: string;
      headers?: Record<string, string>;
      unchecked?: string;
    } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["Content-Type"] ??= "application/json";
    }
    const res = await (via.fetch ?? fetch)(`${baseUrl}${path}`, { method, headers, body });
    const text = await res.text();
    if (!opts.unchecked)
      await checkExchange({
        method,
        url: via.checkAt ? `${via.checkAt}${path}` : res.url || `${baseUrl}${path}`,
        status: res.status,
        headers: res.headers,
        text,
      });
    let parsed: unknown = {};
    try {
      parsed = text ? JSON.parse(text) : {};
    } catch {
      parsed = { raw: text };
    }
    if (!opts.unchecked) checkRequestId(res.headers, parsed);
    return { status: res.status, body: parsed as T, headers: res.headers, text };
  }

  const tokens = new Map<string, Promise<string>>();
  const tokenFor = (userId: string) => {
    let t = tokens.get(userId);
    if (!t) {
      t = shopperToken(userId);
      tokens.set(userId, t);
    }
    return t;
  };

  return {
    call,
    admin: <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
      call<T>(method, `/api/admin${path}`, { token: ADMIN_TOKEN, ...(body === undefined ? {} : { body }) }),
    async buy(productToken: string, userId: string, quantity?: number, headers: Record<string, string> = {}) {
      return call("POST", `/api/buy/${productToken}`, {
        token: await tokenFor(userId),
        ...(quantity === undefined ? {} : { body: { quantity } }),
        headers,
      });
    },
    async order(orderId: string, userId: string, action?: "pay" | "cancel") {
      const token = await tokenFor(userId);
      return action
        ? call("POST", `/api/orders/${orderId}/${action}`, { token })
        : call("GET", `/api/orders/${orderId}`, { token });
    },
    /** Creates a sale that is live now unless told otherwise; returns the operator's Sale. */
    async createSale(overrides: Record<string, unknown> = {}) {
      const res = await call("POST", "/api/admin/sales", {
        token: ADMIN_TOKEN,
        body: saleDefinition(overrides),
      });
      if (res.status !== 201) throw new Error(`createSale: ${res.status} ${res.text}`);
      return res.body as { saleId: string; productToken: string; [k: string]: unknown };
    },
    stats: (saleId: string) => call("GET", `/api/admin/sales/${saleId}/stats`, { token: ADMIN_TOKEN }),
  };
}

export type ApiClient = ReturnType<typeof apiClient>;

/** A sale definition for `POST /api/admin/sales`: a unique product, live from a second ago for an hour. */
export function saleDefinition(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Date.now();
  return {
    productId: `sku-${now}-${Math.random().toString(36).slice(2, 8)}`,
    name: "Test tickets",
    priceCents: 4900,
    stock: 10,
    perUserLimit: 2,
    startsAt: new Date(now - 1000).toISOString(),
    endsAt: new Date(now + 3600_000).toISOString(),
    paymentWindowSeconds: 600,
    ...overrides,
  };
}
