import {
  type Credential,
  type EngineApi,
  type EngineOptions,
  engineApi,
  type Result,
  toResult,
} from "./http";
import type { components } from "./schema";

export type OperatorSale = components["schemas"]["OperatorSale"];
export type SaleDefinition = components["schemas"]["SaleDefinition"];
export type SaleStats = components["schemas"]["SaleStats"];

/**
 * The shop operator's side, with the ADMIN_TOKEN (server-side code only: never ship it to a browser).
 *
 * @example
 * const ops = operatorClient({ baseUrl }, process.env.ADMIN_TOKEN!);
 * const sale = await ops.createSale({ productId: "sku-1", name: "Drop", priceCents: 4900, stock: 100,
 *   perUserLimit: 2, startsAt, endsAt, paymentWindowSeconds: 600 });
 */
export function operatorClient(options: EngineOptions, adminToken: Credential) {
  const api: EngineApi = engineApi(options, adminToken);
  const path = (saleId: string) => ({ params: { path: { saleId } } });
  return {
    /** The typed client of every route, for what the helpers do not cover. */
    api,
    /** Creates a sale; the answer carries its `productToken`. */
    createSale: async (definition: SaleDefinition): Promise<Result<OperatorSale>> =>
      toResult(await api.POST("/api/admin/sales", { body: definition })),
    /** The operator's view of one sale. */
    getSale: async (saleId: string): Promise<Result<OperatorSale>> =>
      toResult(await api.GET("/api/admin/sales/{saleId}", path(saleId))),
    /** Units and orders by status, and whether the sale's invariant holds. */
    stats: async (saleId: string): Promise<Result<SaleStats>> =>
      toResult(await api.GET("/api/admin/sales/{saleId}/stats", path(saleId))),
    pause: async (saleId: string): Promise<Result<OperatorSale>> =>
      toResult(await api.POST("/api/admin/sales/{saleId}/pause", path(saleId))),
    resume: async (saleId: string): Promise<Result<OperatorSale>> =>
      toResult(await api.POST("/api/admin/sales/{saleId}/resume", path(saleId))),
    /**
     * Grows or shrinks the stock, applied once under `idempotencyKey` (a new one unless given) however often
     * retried; `variantId` names the variant (required on a sale of several variants).
     */
    adjustStock: async (
      saleId: string,
      delta: number,
      idempotencyKey: string = crypto.randomUUID(),
      variantId?: string,
    ): Promise<Result<OperatorSale>> =>
      toResult(
        await api.POST("/api/admin/sales/{saleId}/stock", {
          params: { path: { saleId }, header: { "Idempotency-Key": idempotencyKey } },
          body: variantId === undefined ? { delta } : { delta, variantId },
        }),
      ),
  };
}

export type OperatorClient = ReturnType<typeof operatorClient>;
