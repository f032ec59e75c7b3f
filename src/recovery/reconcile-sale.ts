import { sql } from "drizzle-orm";
import {
  type AppliedAdjustment,
  recordAppliedAdjustments,
  setSalePausedInDb,
} from "../catalog/sale-repository";
import { withDb } from "../db/client";
import { enqueueOrders } from "../orders/enqueue-order";
import type { Deps } from "../services";
import { saleKeys } from "../stock/keys";
import {
  type LedgerEntry,
  ledgerField,
  ledgerFieldOf,
  parseLedgerEntry,
  reservedOrder,
} from "../stock/ledger-entry";
import { setSalePaused } from "../stock/pause";
import type { QueuedOrder } from "../stock/queued-order";
import { toRecord } from "../stores/redis-reply";
import { withRedis } from "../stores/with-redis";
import { type SaleStats, saleStats } from "./sale-stats";

const DRIFT_RECHECK_MS = 1_000;
const PUBLISH_CHUNK = 50;
const driftOf = (s: SaleStats) => s.stock - (s.remaining + s.liveUnits + s.pendingRestoreUnits);

export type ReconcileReport = {
  saleId: string;
  checkedLedgerEntries: number;
  republished: string[];
  /** adjustments Redis applied that Postgres had not recorded (their request failed in between) */
  recordedAdjustments: string[];
  ordersWithoutReservation: string[];
  mismatched: {
    orderId: string;
    ledger: { userId?: string; quantity?: number };
    db: { userId: string; quantity: number };
  }[];
  drift: number;
  paused: boolean;
  trimmed: number;
  stats: SaleStats;
};

/**
 * Seed 003's reconciliation: the Redis ledger against the Postgres orders. A reservation with no order
 * (its queue message lost) is republished; an order with no reservation, or one whose user or quantity
 * differ, is reported; stock drift pauses the sale rather than overwriting either side. Ledger entries
 * whose story is finished in Postgres (paid, or expired/cancelled and restored; adjustments recorded)
 * are trimmed once the order was written LEDGER_TRIM_AFTER_SECONDS ago (a day by default): until then
 * a late delivery of its order write relies on the entry to know the order is already counted.
 */
export async function reconcileSale(
  deps: ReconcileDeps,
  saleId: string,
  graceMs: number,
): Promise<ReconcileReport> {
  const keys = saleKeys(saleId);
  const raw = Object.values(toRecord(await withRedis(() => deps.redis.hgetall(keys.ledger))) ?? {});
  const ledger = raw.map(parseLedgerEntry).filter((e): e is LedgerEntry => e !== null);
  const { rows, recordedAdjustments } = await readOrdersAndAdjustments(deps, saleId);
  const found = checkReservations(ledger, rows, { saleId, now: deps.now, graceMs });
  const { unrecorded, trim } = checkAdjustments(ledger, recordedAdjustments, deps);
  found.trim.push(...trim);
  const completedAdjustments = await recordAppliedAdjustments(deps, saleId, unrecorded);
  for (let i = 0; i < found.lost.length; i += PUBLISH_CHUNK) {
    const chunk = found.lost.slice(i, i + PUBLISH_CHUNK);
    await enqueueOrders(deps, chunk, { generation: `r${Math.floor(deps.now / 60_000)}` });
  }
  const reserved = new Set(ledger.flatMap((e) => (e.type === "reserve" ? [e.orderId] : [])));
  const ordersWithoutReservation = [...rows.values()]
    .filter((r) => r.status === "awaiting_payment" && !reserved.has(r.id))
    .map((r) => r.id);
  const { stats, drift, paused } = await checkDrift(deps, saleId);
  const { mismatched } = found;
  if (found.trim.length > 0 && mismatched.length === 0)
    await withRedis(() => deps.redis.hdel(keys.ledger, ...found.trim));
  return {
    saleId,
    checkedLedgerEntries: raw.length,
    republished: found.lost.map((o) => o.orderId),
    recordedAdjustments: completedAdjustments,
    ordersWithoutReservation,
    mismatched,
    drift,
    paused,
    trimmed: mismatched.length === 0 ? found.trim.length : 0,
    stats,
  };
}

type ReconcileDeps = Pick<Deps, "redis" | "db" | "config" | "qstash" | "now">;
type OrderReading = {
  id: string;
  user_id: string;
  quantity: number;
  status: string;
  restored_at: string | null;
  trimmable: boolean;
};

/** The sale's orders (with whether each was written long enough ago to trim) and recorded adjustments. */
async function readOrdersAndAdjustments(deps: ReconcileDeps, saleId: string) {
  const result = await withDb(() =>
    deps.db.execute<OrderReading>(sql`
      select id, user_id, quantity, status, restored_at,
             written_at < now() - make_interval(secs => ${deps.config.LEDGER_TRIM_AFTER_SECONDS}) as trimmable
      from orders where sale_id = ${saleId}`),
  );
  const adjustments = await withDb(() =>
    deps.db.execute<{ id: string }>(sql`select id from stock_adjustments where sale_id = ${saleId}`),
  );
  return {
    rows: new Map(result.rows.map((r) => [r.id, r])),
    recordedAdjustments: new Set(adjustments.rows.map((r) => r.id)),
  };
}

/**
 * Each reservation against its order: lost (no order, older than the grace period), mismatched (user or
 * quantity differ), or finished and old enough that no delivery of its order write can still arrive
 * (see writeAndAck): its entries may be trimmed.
 */
function checkReservations(
  ledger: LedgerEntry[],
  rows: Map<string, OrderReading>,
  at: { saleId: string; now: number; graceMs: number },
) {
  const lost: QueuedOrder[] = [];
  const mismatched: ReconcileReport["mismatched"] = [];
  const trim: string[] = [];
  for (const entry of ledger) {
    if (entry.type !== "reserve") continue;
    const row = rows.get(entry.orderId);
    if (!row) {
      if (at.now - entry.at >= at.graceMs) lost.push(reservedOrder(at.saleId, entry));
      continue;
    }
    if (row.user_id !== entry.userId || Number(row.quantity) !== entry.quantity) {
      const db = { userId: row.user_id, quantity: Number(row.quantity) };
      mismatched.push({
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
      trim.push(ledgerFieldOf(entry));
      if (row.restored_at !== null) trim.push(ledgerField("restore", entry.orderId));
    }
  }
  return { lost, mismatched, trim };
}

/**
 * Adjustments Redis applied that Postgres has not recorded (to record now), and recorded ones kept a day
 * after, like a reservation (a retry still under way finds it applied), then trimmed.
 */
function checkAdjustments(ledger: LedgerEntry[], recorded: Set<string>, deps: ReconcileDeps) {
  const unrecorded: AppliedAdjustment[] = [];
  const trim: string[] = [];
  for (const entry of ledger) {
    if (entry.type !== "adjust") continue;
    const old = deps.now - entry.at > deps.config.LEDGER_TRIM_AFTER_SECONDS * 1000;
    if (!recorded.has(entry.adjustmentId)) {
      const { adjustmentId: id, delta, epoch } = entry;
      if (epoch !== undefined) unrecorded.push({ id, delta, epoch });
    } else if (old) trim.push(ledgerFieldOf(entry));
  }
  return { unrecorded, trim };
}

/** The figures, and the sale paused when stock drifts or a user holds too much, twice a moment apart. */
async function checkDrift(deps: ReconcileDeps, saleId: string) {
  let stats = await saleStats(deps, saleId);
  let drift = driftOf(stats);
  if (drift !== 0 || stats.usersOverLimit > 0) {
    // a live sale moves between readings: only a drift that is still there a moment later is real
    await new Promise((r) => setTimeout(r, DRIFT_RECHECK_MS));
    const again = await saleStats(deps, saleId);
    if (driftOf(again) !== drift) drift = 0;
    stats = again;
  }
  const paused = drift !== 0 || stats.usersOverLimit > 0;
  if (paused) {
    await setSalePaused(deps.redis, saleId, true);
    await setSalePausedInDb(deps.db, saleId, true);
  }
  return { stats, drift, paused };
}
