import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { type AdjustmentEntry, parseLedgerEntry } from "./ledger-entry";
import type { AppliedAdjustment } from "./stock-adjustment";
import { recordAppliedAdjustments } from "./stock-adjustment";

/**
 * The statement a rebuild runs in its transaction (after moving the epoch, under the sale's row lock):
 * the ids of the adjustments Postgres has recorded for the sale. rebuild-sale.lua keeps every other
 * adjustment the old Redis applied (ARGV[6]), so an adjustment whose request failed between the two
 * stores is neither dropped nor counted twice by a rebuild.
 */
export function recordedAdjustmentIds(saleId: string) {
  return sql`select id from stock_adjustments where sale_id = ${saleId}`;
}

/** rebuild-sale.lua's ARGV[6]: the recorded ids as a JSON array. */
export function recordedAdjustmentsArg(rows: unknown): string {
  return JSON.stringify((rows as { id: string }[]).map((r) => r.id));
}

/** Whether a field of rebuild-sale.lua's reply names a kept adjustment (order ids never start with "a:"). */
export function isAdjustmentField(field: string): boolean {
  return field.startsWith("a:");
}

/** A kept adjustment's entry from the script's reply, as the ledger now holds it (its new epoch). */
export function keptAdjustment(entryJson: string): AppliedAdjustment | null {
  const entry = parseLedgerEntry(entryJson);
  if (entry?.type !== "adjust") return null;
  const { adjustmentId: id, delta, epoch } = entry as AdjustmentEntry;
  return { id, delta, epoch: epoch ?? 1 };
}

/**
 * Records in Postgres the adjustments a rebuild kept (they are in the new Redis state, under the new
 * epoch). A failure is left to the reconciliation, which records ledger entries Postgres lacks.
 */
export async function recordKeptAdjustments(
  deps: { db: Db },
  saleId: string,
  kept: AppliedAdjustment[],
): Promise<void> {
  if (kept.length === 0) return;
  await recordAppliedAdjustments(deps, saleId, kept).catch((error) =>
    console.warn(
      `rebuild of sale ${saleId}: ${kept.length} kept adjustment(s) left to the reconciliation`,
      error,
    ),
  );
}

/** The units the kept adjustments add (negative when they removed units). */
export function keptUnits(kept: AppliedAdjustment[]): number {
  return kept.reduce((sum, a) => sum + a.delta, 0);
}
