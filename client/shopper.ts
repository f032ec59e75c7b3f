import {
  type Credential,
  type EngineApi,
  type EngineOptions,
  engineApi,
  type Result,
  sleep,
  toResult,
} from "./http";
import type { components } from "./schema";

export type Sale = components["schemas"]["Sale"];
export type Order = components["schemas"]["Order"];
export type BuyAccepted = components["schemas"]["BuyAccepted"];
export type OrderStatus = Order["status"];

/** What a checkout answers (contract, Payments): where to send the shopper to pay. */
export type Checkout = { orderId: string; provider: string; url: string; expiresAt: string };

/** Statuses an order leaves `queued` for. */
const SETTLED: readonly OrderStatus[] = ["awaiting_payment", "paid", "expired", "cancelled"];

/** Longest wait the helpers take from a `Retry-After` before trying again. */
const MAX_WAIT_MS = 5_000;

/**
 * The shopper's side of the engine, signed in with the shop's token: sales, buying, orders.
 *
 * @example
 * const shop = shopperClient({ baseUrl }, () => auth.getToken());
 * const { sales } = (await shop.listSales()).value;
 * const bought = await shop.buy(sales[0].productToken!, { quantity: 1 });
 * if (bought.ok) console.log(await shop.awaitOrder(bought.value.orderId));
 */
export function shopperClient(options: EngineOptions, token: Credential) {
  const api: EngineApi = engineApi(options, token);
  const readOrder = async (orderId: string): Promise<Result<Order>> =>
    toResult(await api.GET("/api/orders/{orderId}", { params: { path: { orderId } } }));
  return {
    /** The typed client of every route, for what the helpers do not cover. */
    api,
    /** Live and upcoming sales. */
    listSales: async (): Promise<Result<components["schemas"]["SaleList"]>> =>
      toResult(await api.GET("/api/sales")),
    /** One sale (`productToken` only while it is live). */
    getSale: async (saleId: string): Promise<Result<Sale>> =>
      toResult(await api.GET("/api/sales/{saleId}", { params: { path: { saleId } } })),
    /**
     * Reserves units under an `Idempotency-Key` (a new one unless given): a 503 or a lost connection is
     * retried with the same key, so the units are reserved at most once. Returns the key with the answer.
     */
    async buy(
      productToken: string,
      opts: { quantity?: number; idempotencyKey?: string; retries?: number } = {},
    ): Promise<Result<BuyAccepted> & { idempotencyKey: string }> {
      const idempotencyKey = opts.idempotencyKey ?? crypto.randomUUID();
      for (let attempt = 0; ; attempt++) {
        const last = attempt >= (opts.retries ?? 2);
        try {
          const result = toResult(
            await api.POST("/api/buy/{productToken}", {
              params: { path: { productToken }, header: { "Idempotency-Key": idempotencyKey } },
              body: { quantity: opts.quantity ?? 1 },
            }),
          );
          if (result.ok || result.error.status !== 503 || last) return { ...result, idempotencyKey };
          await sleep(Math.min(MAX_WAIT_MS, (result.error.retryAfterSeconds ?? 1) * 1000));
        } catch (error) {
          if (last) throw error;
          await sleep(500);
        }
      }
    },
    /** The shopper's own order (anyone else's is 404 UNKNOWN_ORDER). */
    readOrder,
    /**
     * Reads the order until its status is one of `until` (by default: no longer `queued`) or `timeoutMs`
     * passes; waits out 429 and 503 by their `Retry-After`. Returns the last answer.
     */
    async awaitOrder(
      orderId: string,
      opts: { until?: readonly OrderStatus[]; timeoutMs?: number; intervalMs?: number } = {},
    ): Promise<Result<Order>> {
      const until = opts.until ?? SETTLED;
      const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
      for (;;) {
        const result = await readOrder(orderId);
        if (result.ok && until.includes(result.value.status)) return result;
        if (!result.ok && ![429, 503].includes(result.error.status)) return result;
        const wait = result.ok ? (opts.intervalMs ?? 250) : (result.error.retryAfterSeconds ?? 1) * 1000;
        if (Date.now() + wait > deadline) return result;
        await sleep(Math.min(MAX_WAIT_MS, wait));
      }
    },
    /** Pays the order (only with `PAYMENT_PROVIDER=local`; otherwise a checkout is the way to pay). */
    pay: async (orderId: string): Promise<Result<Order>> =>
      toResult(await api.POST("/api/orders/{orderId}/pay", { params: { path: { orderId } } })),
    /** Cancels the order while it is `queued` or `awaiting_payment`: its units go back at once. */
    cancel: async (orderId: string): Promise<Result<Order>> =>
      toResult(await api.POST("/api/orders/{orderId}/cancel", { params: { path: { orderId } } })),
    /**
     * The payment provider's checkout for an `awaiting_payment` order (the same one on every retry): send
     * the shopper to `url`. Called by path until the route is in the generated types.
     */
    async checkout(orderId: string): Promise<Result<Checkout>> {
      const request = new Request(
        `${options.baseUrl.replace(/\/+$/, "")}/api/orders/${encodeURIComponent(orderId)}/checkout`,
        {
          method: "POST",
          headers: { Authorization: `Bearer ${typeof token === "string" ? token : await token()}` },
        },
      );
      const response = await (options.fetch ?? fetch)(request);
      const body = (await response.json().catch(() => ({}))) as unknown;
      return toResult(response.ok ? { data: body as Checkout, response } : { error: body, response });
    },
  };
}

export type ShopperClient = ReturnType<typeof shopperClient>;
