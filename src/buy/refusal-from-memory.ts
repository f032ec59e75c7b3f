import { resolveFromMemory } from "../catalog/catalog";
import type { MemoryRefusalDeps } from "../services";
import { storeNowFromMemory } from "../stores/store-clock";
import { countSoldOutFromMemory } from "./sold-out-answers";

/**
 * The buy decision's first two answers when the process can give them from memory alone, with no I/O
 * and no allocation beyond the chart's count: `unknown_product` (the token is not of the shape or not in
 * the catalog: 404) or `sold_out` (the sale is in the sold-out memory: 410, counted for the chart as
 * {@link attemptPurchase} counts it). Null whenever anything needs a store (no catalog yet or one due
 * for its check, a token past the Bloom filter but not yet looked up, the store clock due for its
 * refresh) or the sale is not known sold out: the caller then runs the full attempt, which asks in the
 * same order. Only for attempts without an Idempotency-Key (a keyed retry may be owed its first answer).
 *
 * @example
 * const refused = refusalFromMemory(d, productToken, Date.now()); // "sold_out" | "unknown_product" | null
 */
export function refusalFromMemory(
  d: MemoryRefusalDeps,
  productToken: string,
  localNow: number,
  opts: { admitted?: boolean } = {},
): "unknown_product" | "sold_out" | null {
  const { config, memory } = d;
  const saleId = resolveFromMemory(memory, productToken, {
    now: localNow,
    refreshMs: config.CATALOG_REFRESH_MS,
  });
  if (saleId === null) return "unknown_product";
  // an admitted buy (an Admission header) has its units held: the sold-out memory says nothing of them
  if (saleId === undefined || opts.admitted) return null;
  const now = storeNowFromMemory(memory, localNow, config.STORE_CLOCK_REFRESH_MS);
  if (now === null || !memory.soldOut.knows(saleId, now)) return null;
  countSoldOutFromMemory(d, saleId, now);
  return "sold_out";
}
