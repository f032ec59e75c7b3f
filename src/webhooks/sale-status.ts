import { inArray } from "drizzle-orm";
import { type SaleRecord, saleStatus, toSaleView } from "../catalog/sale-record";
import { withDb } from "../db/client";
import { webhookSaleStatus } from "../db/schema";
import type { AnnounceDeps, LifecycleDeps } from "../services";
import { recordSaleReading, type SaleEventType } from "./emit";
import { publishOutbox } from "./publish";
import { readSaleSnapshot } from "./sale-snapshot";

/** How often an explicit event is read again when newer readings keep being recorded first. */
const READS_PER_EVENT = 3;

/**
 * The status recorded for announcements: the sale's, except that a rebuild's quiet period is not an
 * operator's pause (it is announced as nothing).
 */
const statusToRecord = (sale: SaleRecord, now: number) => saleStatus({ ...sale, recoveringUntil: 0 }, now);

/**
 * Announces a sale as Redis holds it now: reads it ({@link readSaleSnapshot}: its state, the store's time
 * and the read's stamp at one instant), then records that reading and writes the events it announces in
 * one statement ({@link recordSaleReading}): a status change (paused, resumed, live, sold out, ended) and
 * `type` if given. A reading older than one already recorded announces nothing (the newer one said
 * what changed), so a sale's events carry versions in the order of the states they describe; an
 * explicit `type` is then read again, and its event describes a state that includes its change.
 * Publishes what was written. Returns how many events were written; a store failure is thrown.
 *
 * @example
 * await announceSale(deps, saleId, "sale.stock_adjusted"); // after the adjustment is applied
 */
export async function announceSale(
  deps: AnnounceDeps,
  saleId: string,
  type: SaleEventType | null = null,
): Promise<number> {
  for (let read = 0; read < READS_PER_EVENT; read++) {
    const snapshot = await readSaleSnapshot(deps.redis, saleId);
    if (!snapshot) return 0;
    const { sale, at, epoch, stamp } = snapshot;
    const { recorded, entries } = await recordSaleReading(
      deps,
      { saleId, epoch, stamp, status: statusToRecord(sale, at), sale: toSaleView(sale, at, "operator") },
      type,
    );
    await publishOutbox(deps, entries);
    if (recorded || type === null) return new Set(entries.map((e) => e.msgId)).size;
  }
  console.warn(`webhooks: ${type} of sale ${saleId} not announced: newer readings kept being recorded first`);
  return 0;
}

/** {@link announceSale} that never throws (the minute sweep announces the status changes it missed). */
async function announceOrLeave(deps: AnnounceDeps, saleId: string, what: string): Promise<number> {
  try {
    return await announceSale(deps, saleId);
  } catch (error) {
    console.warn(`webhooks: ${what} of sale ${saleId} left to the sweep:`, error);
    return 0;
  }
}

/**
 * The sweep's step for the status changes no request announces: a sale opening (`sale.live`, also when
 * units come back to a sold-out sale), selling out, ending, or paused by the reconciliation. `sales` is
 * the sweep's early read: a sale whose status there differs from the one recorded (one query for all)
 * is read again now and announced from that reading, so a status the sale lost in between (it sold out
 * while the sweep ran) is never announced. Runs once a minute, from any process: an announcement lags
 * the change by at most a minute, and is made once whichever process sees it first. Returns how many
 * events were written.
 */
export async function announceSaleStatuses(
  deps: AnnounceDeps & { now: number },
  sales: SaleRecord[],
): Promise<number> {
  if (sales.length === 0) return 0;
  const rows = await withDb(() =>
    deps.db
      .select({ saleId: webhookSaleStatus.saleId, status: webhookSaleStatus.status })
      .from(webhookSaleStatus)
      .where(
        inArray(
          webhookSaleStatus.saleId,
          sales.map((s) => s.saleId),
        ),
      ),
  );
  const recorded = new Map(rows.map((r) => [r.saleId, r.status]));
  let announced = 0;
  for (const sale of sales) {
    if (recorded.get(sale.saleId) === statusToRecord(sale, deps.now)) continue;
    announced += await announceSale(deps, sale.saleId);
  }
  return announced;
}

/**
 * {@link announceSale} for sales an order write just left with no units (the order-write job), so
 * `sale.sold_out` goes out within moments rather than at the next sweep: one MULTI and one statement
 * per sale, only when a batch takes a sale to zero. Never throws: the sweep announces what this missed.
 */
export async function announceSoldOut(deps: LifecycleDeps, saleIds: string[]): Promise<void> {
  for (const saleId of saleIds) await announceOrLeave(deps, saleId, "sold-out announcement");
}

/**
 * {@link announceSale} for a sale just created (live at once: `sale.live` now; upcoming: recorded, so
 * the sweep announces it live when it opens), or just paused or resumed by the operator. Never throws:
 * the sweep announces the status change otherwise.
 */
export async function announceSaleChange(deps: AnnounceDeps, saleId: string): Promise<void> {
  await announceOrLeave(deps, saleId, "announcement");
}
