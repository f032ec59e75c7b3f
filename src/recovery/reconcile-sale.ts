import { recordAppliedAdjustments, setSalePausedInDb } from "../catalog/sale-repository";
import { type AuditActor, appendAudit } from "../db/audit-log";
import { enqueueOrders } from "../orders/enqueue-order";
import type { ReconcileDeps } from "../services";
import { saleKeys } from "../stock/keys";
import type { LedgerEntry } from "../stock/ledger-entry";
import { setSalePaused } from "../stock/pause";
import { storeNow } from "../stores/store-clock";
import { withRedis } from "../stores/with-redis";
import { checkAdjustments, checkReservations, type Findings, type Mismatch } from "./reconcile-checks";
import {
  checkOrdersChunk,
  readLedgerChunk,
  readOrdersById,
  readRecordedAdjustments,
  readWatermark,
  START,
  saveWatermark,
} from "./reconcile-walk";
import { type CounterRepair, recountCounters } from "./sale-counters";
import { type SaleStats, saleStats } from "./sale-stats";

const DRIFT_RECHECK_MS = 1_000;
const PUBLISH_CHUNK = 50;
const driftOf = (s: Pick<SaleStats, "stock" | "remaining" | "liveUnits" | "pendingRestoreUnits">) =>
  s.stock - (s.remaining + s.liveUnits + s.pendingRestoreUnits);

/** A variant whose units in Redis disagree with Postgres: stock − (remaining + live + restoring). */
export type VariantDrift = { variantId: string; drift: number };

/**
 * Each variant's drift in one reading, those that have one (a sale of one variant: none, it is the sale's).
 * A variant's stock is Postgres's (Redis keeps the sale's only), so while the variants' stock does not add
 * up to Redis's an adjustment may be applied in Redis and not yet recorded: its variant would seem to
 * drift. Such a reading counts only once a pass through the ledger is complete (every adjustment Redis
 * applied before it was then recorded); until then the stats show it as a break.
 */
function variantDrifts(s: SaleStats, passComplete: boolean): VariantDrift[] {
  if (s.variants.length < 2) return [];
  const recorded = s.variants.reduce((sum, v) => sum + v.stock, 0) === s.stock;
  if (!recorded && !passComplete) return [];
  return s.variants.map((v) => ({ variantId: v.variantId, drift: driftOf(v) })).filter((v) => v.drift !== 0);
}

export type ReconcileReport = {
  saleId: string;
  /** a full run (every ledger entry and order), or one incremental run from the watermark */
  full: boolean;
  checkedLedgerEntries: number;
  /** orders written since the last run's watermark that this run checked */
  checkedOrders: number;
  /** the walk through the ledger finished a pass in this run (the counters were then recounted) */
  passComplete: boolean;
  republished: string[];
  /** adjustments Redis applied that Postgres had not recorded (their request failed in between) */
  recordedAdjustments: string[];
  ordersWithoutReservation: string[];
  mismatched: Mismatch[];
  /** the sale's counters against a recount of its orders: checked once per pass; those repaired */
  counters: { checked: boolean; repaired: CounterRepair[] };
  drift: number;
  /** variants whose drift lasted across two readings (a drop of several variants), each with its drift */
  variants: VariantDrift[];
  paused: boolean;
  trimmed: number;
  stats: SaleStats;
};

/**
 * Seed 003's reconciliation, the Redis ledger against the Postgres orders, in bounded chunks: a run
 * goes on from the sale's watermark (a cursor in the ledger, the last order checked) through at most
 * RECONCILE_CHUNK ledger entries and as many orders written since, so its cost does not grow with the
 * sale; `full` walks everything at once. A reservation with no order (its queue message lost) is
 * republished; an order with no reservation, or one whose user or quantity differ, is reported; stock
 * drift pauses the sale rather than overwriting either side. Once per pass through the ledger (every
 * run for a small sale) the counters behind the stats are recounted and repaired. Ledger entries whose
 * story is finished in Postgres (paid, or expired/cancelled and restored; adjustments recorded) are
 * trimmed once the order was written LEDGER_TRIM_AFTER_SECONDS ago (a day by default): until then a
 * late delivery of its order write relies on the entry to know the order is already counted. An
 * operator's run (`actor`) appends its audit entry `sale.reconcile` at the end, repaired or not: the
 * repairs are many transactions, so the entry is its own statement after them.
 */
export async function reconcileSale(
  deps: ReconcileDeps,
  saleId: string,
  graceMs: number,
  opts: { full?: boolean; actor?: AuditActor } = {},
): Promise<ReconcileReport> {
  const full = opts.full === true;
  const size = deps.config.RECONCILE_CHUNK;
  let mark = full ? START : await readWatermark(deps, saleId);
  const found: Findings = { read: 0, lost: [], mismatched: [], trim: [], unrecorded: [] };
  do {
    const chunk = await readLedgerChunk(deps, saleId, mark.ledgerCursor, size);
    await checkLedgerChunk(deps, saleId, chunk.entries, graceMs, found);
    found.read += chunk.read;
    mark = { ...mark, ledgerCursor: chunk.cursor };
  } while (full && mark.ledgerCursor !== "0");
  const passComplete = mark.ledgerCursor === "0";
  let checkedOrders = 0;
  const ordersWithoutReservation: string[] = [];
  for (let more = true; more; ) {
    const orders = await checkOrdersChunk(deps, saleId, mark, size);
    checkedOrders += orders.checked;
    ordersWithoutReservation.push(...orders.withoutReservation);
    mark = orders.mark;
    more = full && orders.checked === size;
  }
  const recordedAdjustments = await recordAppliedAdjustments(deps, saleId, found.unrecorded);
  for (let i = 0; i < found.lost.length; i += PUBLISH_CHUNK) {
    const chunk = found.lost.slice(i, i + PUBLISH_CHUNK);
    await enqueueOrders(deps, chunk, { generation: `r${Math.floor(deps.now / 60_000)}` });
  }
  // only once the chunk's repairs are made: a run that fails before this checks the same chunk again
  await saveWatermark(deps, saleId, mark);
  const repaired = passComplete ? await recountCounters(deps.db, saleId) : [];
  if (repaired.length > 0) console.error(`reconcile repaired sale ${saleId}'s counters`, repaired);
  const { stats, drift, variants, paused } = await checkDrift(deps, saleId, passComplete);
  const { mismatched } = found;
  if (found.trim.length > 0 && mismatched.length === 0)
    await withRedis(() => deps.redis.hdel(saleKeys(saleId).ledger, ...found.trim));
  const report: ReconcileReport = {
    saleId,
    full,
    checkedLedgerEntries: found.read,
    checkedOrders,
    passComplete,
    republished: found.lost.map((o) => o.orderId),
    recordedAdjustments,
    ordersWithoutReservation,
    mismatched,
    counters: { checked: passComplete, repaired },
    drift,
    variants,
    paused,
    trimmed: mismatched.length === 0 ? found.trim.length : 0,
    stats,
  };
  if (opts.actor) await appendAudit(deps.db, reconcileEntry(opts.actor, report));
  return report;
}

/** An operator's reconciliation as its audit entry (always one, repaired or not): what it found and repaired. */
function reconcileEntry(actor: AuditActor, r: ReconcileReport) {
  return {
    ...actor,
    action: "sale.reconcile" as const,
    saleId: r.saleId,
    after: {
      full: r.full,
      republished: r.republished.length,
      recordedAdjustments: r.recordedAdjustments.length,
      ordersWithoutReservation: r.ordersWithoutReservation.length,
      mismatched: r.mismatched.length,
      countersRepaired: r.counters.repaired.length,
      drift: r.drift,
      variantsDrifted: r.variants.map((v) => v.variantId),
      paused: r.paused,
    },
  };
}

/** One chunk of ledger entries against Postgres: its reservations' orders, its adjustments' records. */
async function checkLedgerChunk(
  deps: ReconcileDeps,
  saleId: string,
  chunk: { field: string; entry: LedgerEntry }[],
  graceMs: number,
  found: Findings,
) {
  const ledger = chunk.map((c) => c.entry);
  const reserved = ledger.flatMap((e) => (e.type === "reserve" ? [e.orderId] : []));
  const adjusted = ledger.flatMap((e) => (e.type === "adjust" ? [e.adjustmentId] : []));
  const rows = await readOrdersById(deps, reserved);
  checkReservations(ledger, rows, { saleId, now: deps.now, graceMs }, found);
  checkAdjustments(ledger, await readRecordedAdjustments(deps, adjusted), deps, found);
}

/**
 * The figures, and the sale paused when stock drifts or a user holds too much, twice a moment apart: the
 * sale's stock, and on a drop of several variants each variant's (its Redis remaining against its
 * Postgres stock less its live units) and each variant's own cap. Like the sale's total, a variant's
 * units are never overwritten here: Redis holds reservations Postgres has not seen yet, so only a
 * rebuild, once the sale is paused and its order writes drained, may set them again.
 */
async function checkDrift(deps: ReconcileDeps, saleId: string, passComplete: boolean) {
  let stats = await saleStats(deps, saleId);
  let drift = driftOf(stats);
  let variants = variantDrifts(stats, passComplete);
  const overCap = (s: SaleStats) => s.usersOverLimit + s.variants.reduce((n, v) => n + v.usersOverLimit, 0);
  if (drift !== 0 || variants.length > 0 || overCap(stats) > 0) {
    // a live sale moves between readings: only a drift that is still there a moment later is real
    await new Promise((r) => setTimeout(r, DRIFT_RECHECK_MS));
    const again = await saleStats(deps, saleId);
    if (driftOf(again) !== drift) drift = 0;
    const lasting = new Map(variantDrifts(again, passComplete).map((v) => [v.variantId, v.drift]));
    variants = variants.filter((v) => lasting.get(v.variantId) === v.drift);
    stats = again;
  }
  const paused = drift !== 0 || variants.length > 0 || overCap(stats) > 0;
  if (paused) {
    const version = await setSalePausedInDb(deps.db, saleId, true);
    const now = await storeNow({ ...deps, defer: (p) => void p.catch(() => {}) });
    await setSalePaused(deps.redis, saleId, true, { version, now });
  }
  return { stats, drift, variants, paused };
}
