import type { AppliedAdjustment } from "../catalog/sale-repository";
import type { ReconcileDeps } from "../services";
import { type LedgerEntry, ledgerField, ledgerFieldOf, reservedOrder } from "../stock/ledger-entry";
import type { QueuedOrder } from "../stock/queued-order";
import type { OrderReading } from "./reconcile-walk";

/** An order whose user or quantity differ between the ledger and Postgres. */
export type Mismatch = {
  orderId: string;
  ledger: { userId?: string; quantity?: number };
  db: { userId: string; quantity: number };
};

/** What a run found so far, chunk after chunk. */
export type Findings = {
  read: number;
  lost: QueuedOrder[];
  mismatched: Mismatch[];
  trim: string[];
  unrecorded: AppliedAdjustment[];
};

/**
 * Each reservation against its order: lost (no order, older than the grace period), mismatched (user or
 * quantity differ), or finished and old enough that no delivery of its order write can still arrive
 * (see writeAndAck): its entries may be trimmed.
 */
export function checkReservations(
  ledger: LedgerEntry[],
  rows: Map<string, OrderReading>,
  at: { saleId: string; now: number; graceMs: number },
  found: Findings,
) {
  for (const entry of ledger) {
    if (entry.type !== "reserve") continue;
    const row = rows.get(entry.orderId);
    if (!row) {
      if (at.now - entry.at >= at.graceMs) found.lost.push(reservedOrder(at.saleId, entry));
      continue;
    }
    if (row.user_id !== entry.userId || Number(row.quantity) !== entry.quantity) {
      const db = { userId: row.user_id, quantity: Number(row.quantity) };
      found.mismatched.push({
        orderId: entry.orderId,
        ledger: { userId: entry.userId, quantity: entry.quantity },
        db,
      });
      continue;
    }
    const finished =
      (row.status === "paid" || row.restored_at !== null) &&
      (row.trimmable === true || String(row.trimmable) === "t");
    if (finished) {
      found.trim.push(ledgerFieldOf(entry));
      if (row.restored_at !== null) found.trim.push(ledgerField("restore", entry.orderId));
    }
  }
}

/**
 * Adjustments Redis applied that Postgres has not recorded (to record now), and recorded ones kept a day
 * after, like a reservation (a retry still under way finds it applied), then trimmed.
 */
export function checkAdjustments(
  ledger: LedgerEntry[],
  recorded: Set<string>,
  deps: ReconcileDeps,
  found: Findings,
) {
  for (const entry of ledger) {
    if (entry.type !== "adjust") continue;
    const old = deps.now - entry.at > deps.config.LEDGER_TRIM_AFTER_SECONDS * 1000;
    if (!recorded.has(entry.adjustmentId)) {
      const { adjustmentId: id, delta, epoch, variantId } = entry;
      if (epoch !== undefined)
        found.unrecorded.push({ id, delta, epoch, ...(variantId ? { variantId } : {}) });
    } else if (old) found.trim.push(ledgerFieldOf(entry));
  }
}
