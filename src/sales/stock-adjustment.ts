import { type SaleRecord, tracksVariants, variantsOfSale } from "../catalog/sale-record";
import { findAdjustment, type RecordedAdjustment, recordAdjustment } from "../catalog/sale-repository";
import type { AuditActor } from "../db/audit-log";
import { newAdjustmentId } from "../ids";
import type { Deps } from "../services";
import { adjustStock, readAdjustmentEntry } from "../stock/adjust";

/** `variantRemaining`: the adjusted variant's units left (a sale of one: the sale's). */
export type AdjustmentResult =
  | { kind: "applied"; remaining: number; stock: number; variantId: string; variantRemaining: number }
  | { kind: "key_reused"; appliedDelta: number; appliedVariant?: string }
  /** `remaining`: the most that may be removed (of the variant, on a drop of several) */
  | { kind: "below_reserved"; remaining: number; variantId: string }
  /** a drop of several variants and no `variantId`: which one is not said */
  | { kind: "variant_required"; variantIds: string[] }
  | { kind: "unknown_variant"; variantId: string }
  | { kind: "not_initialised" }
  | { kind: "rebuilding" };

export type AdjustmentRequest = { delta: number; idempotencyKey: string | null; variantId?: string };

type Target = { variantId: string; tracked: boolean; remaining: number };

/**
 * The variant an adjustment is for: on a drop of several variants the one named (required); on a sale
 * of one its only variant, named or not.
 */
function targetOf(
  sale: SaleRecord,
  variantId: string | undefined,
): Target | Extract<AdjustmentResult, { kind: "variant_required" | "unknown_variant" }> {
  const variants = variantsOfSale(sale);
  const tracked = tracksVariants(sale);
  if (variantId === undefined) {
    const only = variants[0];
    if (tracked || !only) return { kind: "variant_required", variantIds: variants.map((v) => v.variantId) };
    return { variantId: only.variantId, tracked, remaining: sale.remaining };
  }
  const variant = variants.find((v) => v.variantId === variantId);
  if (!variant) return { kind: "unknown_variant", variantId };
  return { variantId, tracked, remaining: tracked ? variant.remaining : sale.remaining };
}

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
 * state that held it (then the answer is `rebuilding`, and a retry applies it afresh). With the
 * operator (`actor`), the audit entry `sale.stock` is written in the statement that records it in Postgres.
 * A drop of several variants adjusts the variant named (`variant_required` without one): its units and
 * the sale's move together in Redis, its own total with the sale's in Postgres, and the same key used
 * for another variant is refused like one used with another delta (Postgres records both; a key recorded
 * before it kept the variant is checked against the ledger entry while Redis keeps it, a day).
 */
export async function applyStockAdjustment(
  deps: Pick<Deps, "redis" | "db" | "now">,
  sale: SaleRecord,
  request: AdjustmentRequest,
  actor?: AuditActor,
): Promise<AdjustmentResult> {
  const { delta, idempotencyKey } = request;
  const target = targetOf(sale, request.variantId);
  if ("kind" in target) return target;
  const { variantId, tracked } = target;
  const id = idempotencyKey ? await adjustmentIdForKey(sale.saleId, idempotencyKey) : newAdjustmentId();
  if (idempotencyKey) {
    const recorded = await findAdjustment(deps.db, id);
    if (recorded !== null) {
      // recorded before variants had their column: the ledger entry (a day) may still name the variant
      const entry =
        tracked && recorded.variantId === null
          ? await readAdjustmentEntry(deps.redis, sale.saleId, id)
          : null;
      const reused = reusedFor(
        { ...recorded, variantId: recorded.variantId ?? entry?.variantId ?? null },
        request,
      );
      if (reused) return reused;
      const { remaining, stock } = sale;
      return { kind: "applied", remaining, stock, variantId, variantRemaining: target.remaining };
    }
  }
  const outcome = await adjustStock(
    deps.redis,
    sale.saleId,
    { adjustmentId: id, delta, ...(tracked ? { variantId } : {}) },
    deps.now,
  );
  switch (outcome.kind) {
    case "not_initialised":
      return outcome;
    case "below_reserved":
      return { kind: "below_reserved", remaining: outcome.remaining, variantId };
    case "id_reused":
      return {
        kind: "key_reused",
        appliedDelta: outcome.appliedDelta,
        ...(outcome.appliedVariant ? { appliedVariant: outcome.appliedVariant } : {}),
      };
  }
  const { remaining, stock, variantRemaining } = outcome;
  const audit = actor && {
    ...actor,
    action: "sale.stock" as const,
    saleId: sale.saleId,
    target: id,
    before: {
      stock: stock - delta,
      remaining: remaining - delta,
      variantId,
      variantRemaining: variantRemaining - delta,
    },
    after: { stock, remaining, delta, variantId, variantRemaining },
  };
  const adjustment = { id, delta, epoch: outcome.epoch, variantId };
  const recorded = await recordAdjustment(deps.db, sale.saleId, adjustment, audit);
  if (recorded.kind === "stale_epoch") return { kind: "rebuilding" };
  const reused = recorded.kind === "already_recorded" ? reusedFor(recorded, { delta, variantId }) : null;
  if (reused) return reused;
  return { kind: "applied", remaining, stock, variantId, variantRemaining };
}

/** A key recorded with another delta or for another variant: the answer refusing its reuse, else null. */
function reusedFor(
  recorded: RecordedAdjustment,
  asked: { delta: number; variantId?: string | undefined },
): Extract<AdjustmentResult, { kind: "key_reused" }> | null {
  const otherVariant =
    recorded.variantId !== null && asked.variantId !== undefined && recorded.variantId !== asked.variantId;
  if (recorded.delta === asked.delta && !otherVariant) return null;
  return {
    kind: "key_reused",
    appliedDelta: recorded.delta,
    ...(otherVariant && recorded.variantId ? { appliedVariant: recorded.variantId } : {}),
  };
}
