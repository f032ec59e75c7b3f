import { sql } from "drizzle-orm";
import { registerProductToken } from "../catalog/catalog";
import { admissionOf } from "../catalog/sale-record";
import { type AppliedAdjustment, recordAppliedAdjustments } from "../catalog/sale-repository";
import { withDb } from "../db/client";
import { reopenRoom } from "../room/open-room";
import { holdGraceMs } from "../room/room";
import { restoreRoom } from "../room/room-record";
import type { RebuildDeps } from "../services";
import { replaceSaleState } from "../stock/replace-state";
import { storeNow } from "../stores/store-clock";
import { settleKeptOrders } from "./rebuild-followup";
import { type LiveOrder, ms, type SaleRow, stateOf, type VariantRow } from "./rebuild-state";

export type RebuildReport = {
  saleId: string;
  epoch: number;
  stock: number;
  liveOrders: number;
  liveUnits: number;
  /** reservations Redis held that Postgres had not counted: kept, counted, republished */
  keptOrders: number;
  /** stock adjustments Redis applied that Postgres had not recorded: kept, counted, recorded */
  keptAdjustments: number;
  remaining: number;
  pausedUntil: string;
};

/**
 * Rebuilds a sale's Redis state from Postgres, for when Redis lost it (a failover with asynchronous
 * replication, a flush) or an operator asks. In one Postgres transaction the sale moves to a new epoch
 * (its row is locked, so no order write interleaves: see writeOrders), expired and cancelled orders
 * whose units had not come back are settled, and every live order is counted in the new epoch. Redis
 * then gets stock = initial + adjustments - live units, the holdings, one ledger entry per live order
 * (with its lines), for a drop of several variants each variant's units and holdings the same way, the
 * meta with the variants, and a pause of `quietSeconds` (by the store's clock) during which order writes still in flight from
 * a lost Redis land and are counted (debit-stock.lua) before anyone can buy again. Reservations the
 * Redis being replaced still holds and Postgres has not counted (unpublished, in flight, or made while
 * this ran) are kept and counted by the script, then republished ({@link settleKeptOrders}); so are the
 * stock adjustments it applied that Postgres has not recorded (counted, then recorded).
 */
export async function rebuildSale(
  deps: RebuildDeps,
  saleId: string,
  quietSeconds: number,
): Promise<RebuildReport | null> {
  const read = await advanceEpoch(deps, saleId);
  if (!read) return null;
  const { sale, live } = read;
  const defer = deps.defer ?? ((p: Promise<unknown>) => void p.catch(() => {}));
  const pausedUntil = (await storeNow({ ...deps, defer })) + quietSeconds * 1000;
  const state = stateOf(read, pausedUntil);
  // a queue or draw sale's room: kept, or given back from its Postgres record when Redis lost it; a
  // lost room without a record (a sale from before records) gets its recorded or a new seed, and, lost
  // after the start, admits nobody until the admissions it forgot have run out; the room's running
  // admissions get the quiet period back (nobody may buy meanwhile)
  if (admissionOf(sale.admission) !== "open") {
    const now = pausedUntil - quietSeconds * 1000;
    const restored = await restoreRoom(deps, saleId, ms(sale.starts_at));
    const drained = now + deps.config.ADMISSION_WINDOW_SECONDS * 1000 + holdGraceMs(deps.config);
    const admitFrom = restored === "unrecorded" && now >= ms(sale.starts_at) ? drained : 0;
    await reopenRoom(deps, saleId, restored, admitFrom, {
      from: now,
      until: pausedUntil,
    });
  }
  const replaced = await replaceSaleState(deps.redis, saleId, state);
  const { kept, keptAdjustments } =
    replaced.kind === "rebuilt" ? replaced : { kept: [], keptAdjustments: [] };
  await registerProductToken(deps, saleId, sale.product_token);
  deps.memory.soldOut.clear(saleId);
  await recordKeptAdjustments(deps, saleId, keptAdjustments);
  await settleKeptOrders(deps, saleId, kept, sale.pause_version ?? 0);
  const stock =
    sale.initial_stock + sale.stock_adjustments + keptAdjustments.reduce((sum, a) => sum + a.delta, 0);
  const liveUnits = live.reduce((sum, o) => sum + o.quantity, 0);
  const keptUnits = kept.reduce((sum, o) => sum + o.quantity, 0);
  return {
    saleId,
    epoch: sale.epoch,
    stock,
    liveOrders: live.length,
    liveUnits,
    keptOrders: kept.length,
    keptAdjustments: keptAdjustments.length,
    remaining: stock - liveUnits - keptUnits,
    pausedUntil: new Date(pausedUntil).toISOString(),
  };
}

/**
 * Records in Postgres the adjustments a rebuild kept (they are in the new Redis state, under the new
 * epoch). A failure is left to the reconciliation, which records ledger entries Postgres lacks.
 */
async function recordKeptAdjustments(deps: RebuildDeps, saleId: string, kept: AppliedAdjustment[]) {
  if (kept.length === 0) return;
  await recordAppliedAdjustments(deps, saleId, kept).catch((error) =>
    console.warn(
      `rebuild of sale ${saleId}: ${kept.length} kept adjustment(s) left to the reconciliation`,
      error,
    ),
  );
}

/**
 * In one Postgres transaction: the sale moves to a new epoch (its row is locked, so no order write
 * interleaves), expired and cancelled orders whose units had not come back are settled, and every live
 * order is counted in the new epoch (with its lines); the adjustments Postgres has recorded and the
 * sale's variants (their stock) are read under the same row lock (the script keeps every other
 * adjustment the old Redis applied). Null when there is no such sale.
 */
async function advanceEpoch(
  deps: RebuildDeps,
  saleId: string,
): Promise<{
  sale: SaleRow;
  variants: VariantRow[];
  live: LiveOrder[];
  settled: string[];
  recordedAdjustments: string[];
} | null> {
  // the live orders' epoch before the settled restores: only the latter move the sale's counters
  // (a trigger), whose row lock is then the transaction's last, as in every other statement
  const [sales, live, settled, adjustments, variants] = await withDb(() =>
    deps.db.transaction([
      sql`update sales set epoch = epoch + 1 where id = ${saleId} returning *`,
      sql`update orders set epoch = (select epoch from sales where id = ${saleId})
          where sale_id = ${saleId} and status in ('awaiting_payment', 'paid')
          returning id, user_id, quantity, created_at, expires_at, items`,
      sql`with settled as (
            update orders set restored_at = now()
            where sale_id = ${saleId} and status in ('expired', 'cancelled') and restored_at is null
            returning id, sale_id
          ), ev as (
            insert into order_events (order_id, sale_id, type, detail)
            select id, sale_id, 'restored', '{"by":"rebuild"}'::jsonb from settled on conflict do nothing
          )
          select id from settled`,
      sql`select id from stock_adjustments where sale_id = ${saleId}`,
      sql`select variant_id, name, price_cents, initial_stock, stock_adjustments, per_user_limit, description,
            image_url from sale_variants where sale_id = ${saleId} order by position`,
    ]),
  );
  const sale = (sales as SaleRow[])[0];
  if (!sale) return null;
  const ids = (rows: unknown) => (rows as { id: string }[]).map((r) => r.id);
  return {
    sale,
    variants: variants as VariantRow[],
    live: live as LiveOrder[],
    settled: ids(settled),
    recordedAdjustments: ids(adjustments),
  };
}
