import { sql } from "drizzle-orm";
import { withDb } from "../db/client";
import { parseQueuedOrder, type QueuedOrder } from "../orders/order-view";
import { withRedis } from "../redis";
import type { Deps } from "../services";
import { registerProductToken } from "./catalog";
import { saleKeys } from "./keys";
import { encodeLedgerEntry, ledgerFieldOf, type ReservationEntry } from "./ledger-entry";
import {
  isAdjustmentField,
  keptAdjustment,
  keptUnits,
  recordedAdjustmentIds,
  recordedAdjustmentsArg,
  recordKeptAdjustments,
} from "./rebuild-adjustments";
import { settleKeptOrders } from "./rebuild-followup";
import { toMetaFields } from "./sale-record";
import { runScript, type ScriptReply } from "./scripts";
import { soldOutCache } from "./sold-out-cache";
import type { AppliedAdjustment } from "./stock-adjustment";
import { storeNow } from "./store-clock";

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
  /** adjustments Redis had applied that Postgres had not recorded: kept, counted, recorded */
  keptAdjustments: number;
  remaining: number;
  pausedUntil: string;
};

export type RebuildDeps = Pick<Deps, "redis" | "db" | "now" | "config" | "qstash"> &
  Partial<Pick<Deps, "defer">>;

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
 * stock adjustments it applied that Postgres has not recorded (counted, then recorded: rebuild-adjustments.ts).
 */
export async function rebuildSale(
  deps: RebuildDeps,
  saleId: string,
  quietSeconds: number,
): Promise<RebuildReport | null> {
  const [sales, settled, live, adjustments] = await withDb(() =>
    deps.db.transaction([
      sql`update sales set epoch = epoch + 1 where id = ${saleId} returning *`,
      sql`with settled as (
            update orders set restored_at = now()
            where sale_id = ${saleId} and status in ('expired', 'cancelled') and restored_at is null
            returning id, sale_id
          ), ev as (
            insert into order_events (order_id, sale_id, type, detail)
            select id, sale_id, 'restored', '{"by":"rebuild"}'::jsonb from settled on conflict do nothing
          )
          select id from settled`,
      sql`update orders set epoch = (select epoch from sales where id = ${saleId})
          where sale_id = ${saleId} and status in ('awaiting_payment', 'paid')
          returning id, user_id, quantity, created_at, expires_at`,
      recordedAdjustmentIds(saleId),
    ]),
  );
  const sale = (sales as SaleRow[])[0];
  if (!sale) return null;
  const orders = live as LiveOrder[];
  const stock = sale.initial_stock + sale.stock_adjustments;
  const liveUnits = orders.reduce((sum, o) => sum + o.quantity, 0);
  const defer = deps.defer ?? ((p: Promise<unknown>) => void p.catch(() => {}));
  const pausedUntil = (await storeNow(deps.redis, defer)) + quietSeconds * 1000;
  const holdings: Record<string, number> = {};
  const ledger: Record<string, string> = {};
  for (const o of orders) {
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
    }),
    epoch: String(sale.epoch),
    recoveringUntil: String(pausedUntil),
  };
  const keys = saleKeys(saleId);
  const reply = await withRedis(() =>
    runScript<ScriptReply>(
      deps.redis,
      "rebuildSale",
      [keys.meta, keys.stock, keys.holdings, keys.ledger, keys.orders, keys.outbox],
      [
        JSON.stringify(meta),
        stock - liveUnits,
        JSON.stringify(holdings),
        JSON.stringify(ledger),
        JSON.stringify((settled as { id: string }[]).map((r) => r.id)),
        recordedAdjustmentsArg(adjustments),
      ],
    ),
  );
  const kept: QueuedOrder[] = [];
  const keptAdjustments: AppliedAdjustment[] = [];
  if (Number(reply[0]) === 1) {
    for (let i = 1; i + 1 < reply.length; i += 2) {
      if (isAdjustmentField(String(reply[i]))) {
        const adjustment = keptAdjustment(String(reply[i + 1]));
        if (adjustment) keptAdjustments.push(adjustment);
        continue;
      }
      const order = parseQueuedOrder(saleId, String(reply[i + 1]));
      if (order) kept.push(order);
    }
  }
  await registerProductToken(deps.redis, saleId, sale.product_token);
  soldOutCache.clear(saleId);
  await recordKeptAdjustments(deps, saleId, keptAdjustments);
  await settleKeptOrders(deps, saleId, kept, sale.paused);
  const keptOrderUnits = kept.reduce((sum, o) => sum + o.quantity, 0);
  const adjusted = stock + keptUnits(keptAdjustments);
  return {
    saleId,
    epoch: sale.epoch,
    stock: adjusted,
    liveOrders: orders.length,
    liveUnits,
    keptOrders: kept.length,
    keptAdjustments: keptAdjustments.length,
    remaining: adjusted - liveUnits - keptOrderUnits,
    pausedUntil: new Date(pausedUntil).toISOString(),
  };
}
