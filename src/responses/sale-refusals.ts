import { isLostSale } from "../catalog/sale-store";
import { SaleLostError } from "../errors";
import { ApiError } from "../http/api-error";
import type { Deps } from "../services";

/**
 * The answer to a read of a sale this process did not find: 404 UNKNOWN_SALE, unless the catalog lists
 * it and Redis lost it (a Cluster master restarted empty): then 503 UNAVAILABLE with `Retry-After`, and
 * the app's error handler starts a recovery. A sale being rebuilt exists: a reader is never told otherwise.
 *
 * @example
 * if (!sale) throw saleNotFound(d, saleId);
 */
export function saleNotFound(d: Pick<Deps, "memory">, saleId: string): Error {
  return isLostSale(d.memory, saleId)
    ? new SaleLostError(saleId)
    : new ApiError("UNKNOWN_SALE", "No such sale.");
}
