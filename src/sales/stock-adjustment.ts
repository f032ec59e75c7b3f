import type { SaleRecord } from "../catalog/sale-record";
import { findAdjustment, recordAdjustment } from "../catalog/sale-repository";
import { newAdjustmentId } from "../ids";
import type { Deps } from "../services";
import { adjustStock } from "../stock/adjust";

export type AdjustmentResult =
  | { kind: "applied"; remaining: number; stock: number }
  | { kind: "key_reused"; appliedDelta: number }
  | { kind: "below_reserved"; remaining: number }
  | { kind: "not_initialised" }
  | { kind: "rebuilding" };

/**
 * The adjustment id of an Idempotency-Key: `k` + SHA-256 of the JSON pair (saleId, key), so keys never
 * meet across sales or collide with generated ids (`a` + 16 base36 characters).
 */
export async function adjustmentIdForKey(saleId: string, key: string): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify([saleId, key]));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `k${Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * Applies an operator's stock adjustment once per id in both stores. Postgres is asked first (an
 * adjustment it recorded is done, even after its Redis ledger entry was trimmed); Redis applies it
 * once per id and says in which generation (epoch); Postgres then records it against that epoch, in
 * the same row lock a rebuild takes to move the epoch on. So a failure anywhere leaves at most the
 * Redis half, which a retry with the same id (or the reconciliation, `recordAppliedAdjustments` in catalog/sale-repository.ts)
 * completes, and a concurrent rebuild either counts the recorded adjustment or replaces the Redis
 * state that held it (then the answer is `rebuilding`, and a retry applies it afresh).
 */
export async function applyStockAdjustment(
  deps: Pick<Deps, "redis" | "db" | "now">,
  sale: SaleRecord,
  request: { delta: number; idempotencyKey: string | null },
): Promise<AdjustmentResult> {
  const { delta, idempotencyKey } = request;
  const id = idempotencyKey ? await adjustmentIdForKey(sale.saleId, idempotencyKey) : newAdjustmentId();
  if (idempotencyKey) {
    const recorded = await findAdjustment(deps.db, id);
    if (recorded !== null && recorded !== delta) return { kind: "key_reused", appliedDelta: recorded };
    if (recorded !== null) return { kind: "applied", remaining: sale.remaining, stock: sale.stock };
  }
  const outcome = await adjustStock(deps.redis, sale.saleId, id, delta, deps.now);
  switch (outcome.kind) {
    case "not_initialised":
      return outcome;
    case "below_reserved":
      return { kind: "below_reserved", remaining: outcome.remaining };
    case "id_reused":
      return { kind: "key_reused", appliedDelta: outcome.appliedDelta };
  }
  const recorded = await recordAdjustment(deps.db, sale.saleId, { id, delta, epoch: outcome.epoch });
  if (recorded.kind === "stale_epoch") return { kind: "rebuilding" };
  if (recorded.kind === "already_recorded" && recorded.delta !== delta)
    return { kind: "key_reused", appliedDelta: recorded.delta };
  return { kind: "applied", remaining: outcome.remaining, stock: outcome.stock };
}
