import { sql } from "drizzle-orm";
import { setSalePausedInDb } from "../catalog/sale-repository";
import { withDb } from "../db/client";
import { enqueueOrders } from "../orders/enqueue-order";
import { type AppliedAdjustment, recordAppliedAdjustments } from "../sales/stock-adjustment";
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
  deps: Pick<Deps, "redis" | "db" | "config" | "qstash" | "now">,
  saleId: string,
  graceMs: number,
): Promise<ReconcileReport> {
  const keys = saleKeys(saleId);
  const raw = Object.values(toRecord(await withRedis(() => deps.redis.hgetall(keys.ledger))) ?? {});
  const ledger = raw.map(parseLedgerEntry).filter((e): e is LedgerEntry => e !== null);
  const reservations = ledger.filter((e) => e.type === "reserve");

  const result = await withDb(() =>
    deps.db.execute<{
      id: string;
      user_id: string;
      quantity: number;
      status: string;
      restored_at: string | null;
      trimmable: boolean;
    }>(sql`
      select id, user_id, quantity, status, restored_at,
             written_at < now() - make_interval(secs => ${deps.config.LEDGER_TRIM_AFTER_SECONDS}) as trimmable
      from orders where sale_id = ${saleId}`),
  );
  const rows = new Map(result.rows.map((r) => [r.id, r]));
  const adjustments = await withDb(() =>
    deps.db.execute<{ id: string }>(sql`select id from stock_adjustments where sale_id = ${saleId}`),
  );
  const recordedAdjustments = new Set(adjustments.rows.map((r) => r.id));

  const republished: string[] = [];
  const lost: QueuedOrder[] = [];
  const mismatched: ReconcileReport["mismatched"] = [];
  const trim: string[] = [];
  for (const entry of reservations) {
    const { orderId } = entry;
    const row = rows.get(orderId);
    if (!row) {
      if (deps.now - entry.at < graceMs) continue;
      lost.push(reservedOrder(saleId, entry));
      republished.push(orderId);
      continue;
    }
    if (row.user_id !== entry.userId || Number(row.quantity) !== entry.quantity) {
      mismatched.push({
        orderId,
        ledger: { userId: entry.userId, quantity: entry.quantity },
        db: { userId: row.user_id, quantity: Number(row.quantity) },
      });
      continue;
    }
    // finished, and old enough that no delivery of its order write can still arrive (see writeAndAck)
    const finished =
      (row.status === "paid" || row.restored_at !== null) &&
      (row.trimmable === true || String(row.trimmable) === "t");
    if (finished) {
      trim.push(ledgerFieldOf(entry));
      if (row.restored_at !== null) trim.push(ledgerField("restore", orderId));
    }
  }
  const unrecorded: AppliedAdjustment[] = [];
  for (const entry of ledger) {
    if (entry.type !== "adjust") continue;
    // kept a day after it is recorded, like a reservation: a retry still under way finds it applied
    const old = deps.now - entry.at > deps.config.LEDGER_TRIM_AFTER_SECONDS * 1000;
    if (!recordedAdjustments.has(entry.adjustmentId)) {
      const { adjustmentId: id, delta, epoch } = entry;
      if (epoch !== undefined) unrecorded.push({ id, delta, epoch });
    } else if (old) trim.push(ledgerFieldOf(entry));
  }
  const completedAdjustments = await recordAppliedAdjustments(deps, saleId, unrecorded);
  for (let i = 0; i < lost.length; i += PUBLISH_CHUNK) {
    const chunk = lost.slice(i, i + PUBLISH_CHUNK);
    await enqueueOrders(deps, chunk, { generation: `r${Math.floor(deps.now / 60_000)}` });
  }
  const reserved = new Set(reservations.map((r) => r.orderId));
  const ordersWithoutReservation = result.rows
    .filter((r) => r.status === "awaiting_payment" && !reserved.has(r.id))
    .map((r) => r.id);

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
  if (trim.length > 0 && mismatched.length === 0)
    await withRedis(() => deps.redis.hdel(keys.ledger, ...trim));
  return {
    saleId,
    checkedLedgerEntries: raw.length,
    republished,
    recordedAdjustments: completedAdjustments,
    ordersWithoutReservation,
    mismatched,
    drift,
    paused,
    trimmed: mismatched.length === 0 ? trim.length : 0,
    stats,
  };
}
