import { sql } from "drizzle-orm";
import { openRoom } from "../admission/open-room";
import { holdGraceMs } from "../admission/room";
import { registerProductToken } from "../catalog/catalog";
import { admissionOf, toMetaFields } from "../catalog/sale-record";
import { type AppliedAdjustment, recordAppliedAdjustments } from "../catalog/sale-repository";
import { withDb } from "../db/client";
import type { RebuildDeps } from "../services";
import { encodeLedgerEntry, ledgerFieldOf, type ReservationEntry } from "../stock/ledger-entry";
import { type RebuiltState, replaceSaleState } from "../stock/replace-state";
import { storeNow } from "../stores/store-clock";
import { settleKeptOrders } from "./rebuild-followup";

type SaleRow = {
  id: string;
  product_id: string;
  name: string;
  price_cents: number;
  initial_stock: number;
  stock_adjustments: number;
  per_user_limit: number;
  starts_at: string;
  ends_at: string;
  payment_window_seconds: number;
  product_token: string;
  paused: boolean;
  epoch: number;
  admission?: string;
  proof_of_work?: boolean;
};
const ms = (v: unknown) => new Date(v as string).getTime();
type LiveOrder = { id: string; user_id: string; quantity: number; created_at: string; expires_at: string };

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
 * then gets stock = initial + adjustments - live units, the holdings, one ledger entry per live order,
 * and a pause of `quietSeconds` (by the store's clock) during which order writes still in flight from
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
  const state = stateOf(sale, live, read, pausedUntil);
  // a queue or draw sale's room: its seed kept, or a new one when it has none (lost with Redis); a room
  // lost after the start forgot what its admissions hold: it admits nobody until they have run out
  if (admissionOf(sale.admission) !== "open") {
    const now = pausedUntil - quietSeconds * 1000;
    const drained = now + deps.config.ADMISSION_WINDOW_SECONDS * 1000 + holdGraceMs(deps.config);
    await openRoom(deps.redis, saleId, now >= ms(sale.starts_at) ? drained : 0);
  }
  const replaced = await replaceSaleState(deps.redis, saleId, state);
  const { kept, keptAdjustments } =
    replaced.kind === "rebuilt" ? replaced : { kept: [], keptAdjustments: [] };
  await registerProductToken(deps, saleId, sale.product_token);
  deps.memory.soldOut.clear(saleId);
  await recordKeptAdjustments(deps, saleId, keptAdjustments);
  await settleKeptOrders(deps, saleId, kept, sale.paused);
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
 * order is counted in the new epoch; the adjustments Postgres has recorded are read under the same
 * row lock (the script keeps every other one the old Redis applied). Null when there is no such sale.
 */
async function advanceEpoch(
  deps: RebuildDeps,
  saleId: string,
): Promise<{ sale: SaleRow; live: LiveOrder[]; settled: string[]; recordedAdjustments: string[] } | null> {
  // the live orders' epoch before the settled restores: only the latter move the sale's counters
  // (a trigger), whose row lock is then the transaction's last, as in every other statement
  const [sales, live, settled, adjustments] = await withDb(() =>
    deps.db.transaction([
      sql`update sales set epoch = epoch + 1 where id = ${saleId} returning *`,
      sql`update orders set epoch = (select epoch from sales where id = ${saleId})
          where sale_id = ${saleId} and status in ('awaiting_payment', 'paid')
          returning id, user_id, quantity, created_at, expires_at`,
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
    ]),
  );
  const sale = (sales as SaleRow[])[0];
  if (!sale) return null;
  const ids = (rows: unknown) => (rows as { id: string }[]).map((r) => r.id);
  return { sale, live: live as LiveOrder[], settled: ids(settled), recordedAdjustments: ids(adjustments) };
}

/** The sale's Redis state by Postgres: stock left, holdings, one reservation entry per live order, meta. */
function stateOf(
  sale: SaleRow,
  live: LiveOrder[],
  read: { settled: string[]; recordedAdjustments: string[] },
  pausedUntil: number,
): RebuiltState {
  const stock = sale.initial_stock + sale.stock_adjustments;
  const holdings: Record<string, number> = {};
  const ledger: Record<string, string> = {};
  for (const o of live) {
    holdings[o.user_id] = (holdings[o.user_id] ?? 0) + o.quantity;
    const entry: ReservationEntry = {
      type: "reserve",
      orderId: o.id,
      userId: o.user_id,
      quantity: o.quantity,
      at: ms(o.created_at),
      expiresAt: ms(o.expires_at),
      epoch: sale.epoch,
      rebuilt: true,
    };
    ledger[ledgerFieldOf(entry)] = encodeLedgerEntry(entry);
  }
  const meta = {
    ...toMetaFields({
      saleId: sale.id,
      productId: sale.product_id,
      name: sale.name,
      priceCents: sale.price_cents,
      perUserLimit: sale.per_user_limit,
      startsAt: ms(sale.starts_at),
      endsAt: ms(sale.ends_at),
      paused: sale.paused,
      paymentWindowMs: sale.payment_window_seconds * 1000,
      stock,
      initialStock: sale.initial_stock,
      productToken: sale.product_token,
      admission: admissionOf(sale.admission),
      proofOfWork: sale.proof_of_work ?? false,
    }),
    epoch: String(sale.epoch),
    recoveringUntil: String(pausedUntil),
  };
  const liveUnits = live.reduce((sum, o) => sum + o.quantity, 0);
  const { settled, recordedAdjustments } = read;
  return { meta, remaining: stock - liveUnits, holdings, ledger, settled, recordedAdjustments };
}
