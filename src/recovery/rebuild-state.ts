import { admissionOf, toMetaFields, type VariantDefinition } from "../catalog/sale-record";
import type { OrderItem } from "../db/schema";
import { encodeLedgerEntry, ledgerFieldOf, type ReservationEntry } from "../stock/ledger-entry";
import type { RebuiltState, VariantState } from "../stock/replace-state";

/** The sale's row as the rebuild's transaction returns it (`returning *`). */
export type SaleRow = {
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
  pause_version?: number;
  epoch: number;
  admission?: string;
  proof_of_work?: boolean;
  description?: string | null;
  image_url?: string | null;
};

/** A variant of the sale, read in the same transaction, in the operator's order. */
export type VariantRow = {
  variant_id: string;
  name: string;
  price_cents: number;
  initial_stock: number;
  stock_adjustments: number;
  per_user_limit: number | null;
  description: string | null;
  image_url: string | null;
};

/** A live order (awaiting payment or paid) counted in the new epoch, with its lines. */
export type LiveOrder = {
  id: string;
  user_id: string;
  quantity: number;
  created_at: string;
  expires_at: string;
  /** jsonb: parsed by the drivers, text if a driver leaves it so */
  items?: OrderItem[] | string | null;
};

/** A live order's lines (none from a row without them). */
function linesOf(o: LiveOrder): OrderItem[] {
  const items: unknown = typeof o.items === "string" ? JSON.parse(o.items) : o.items;
  return Array.isArray(items) ? (items as OrderItem[]) : [];
}

export const ms = (v: unknown) => new Date(v as string).getTime();

/**
 * The sale's Redis state by Postgres: stock left, holdings, one reservation entry per live order (with
 * its lines), meta (with the variants, so that a rebuilt drop is still a drop); for a drop of several
 * variants also each variant's units left (its stock less its units in live orders) and holdings.
 */
export function stateOf(
  read: {
    sale: SaleRow;
    variants: VariantRow[];
    live: LiveOrder[];
    settled: string[];
    recordedAdjustments: string[];
  },
  pausedUntil: number,
): RebuiltState {
  const { sale, variants, live, settled, recordedAdjustments } = read;
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
    const lines = linesOf(o);
    if (lines.length > 0)
      entry.items = lines.map((l) => ({
        variantId: l.variantId,
        quantity: l.quantity,
        priceCents: l.priceCents,
      }));
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
      ...(sale.description ? { description: sale.description } : {}),
      ...(sale.image_url ? { imageUrl: sale.image_url } : {}),
      ...(variants.length > 0 ? { variants: variants.map(variantDefinitionOf) } : {}),
    }),
    epoch: String(sale.epoch),
    pauseVersion: String(sale.pause_version ?? 0),
    recoveringUntil: String(pausedUntil),
  };
  const liveUnits = live.reduce((sum, o) => sum + o.quantity, 0);
  const state: RebuiltState = {
    meta,
    remaining: stock - liveUnits,
    holdings,
    ledger,
    settled,
    recordedAdjustments,
  };
  if (variants.length > 1) state.variants = variantStateOf(variants, live);
  return state;
}

/** A drop's units left per variant (its stock less its units in live orders) and holdings per variant. */
function variantStateOf(variants: VariantRow[], live: LiveOrder[]): VariantState {
  const remaining: Record<string, number> = {};
  for (const v of variants) remaining[v.variant_id] = v.initial_stock + v.stock_adjustments;
  const holdings: Record<string, number> = {};
  for (const o of live) {
    for (const line of linesOf(o)) {
      remaining[line.variantId] = (remaining[line.variantId] ?? 0) - line.quantity;
      const field = `${line.variantId}:${o.user_id}`;
      holdings[field] = (holdings[field] ?? 0) + line.quantity;
    }
  }
  return { remaining, holdings };
}

function variantDefinitionOf(v: VariantRow): VariantDefinition {
  const d: VariantDefinition = { variantId: v.variant_id, name: v.name, priceCents: v.price_cents };
  if (v.per_user_limit !== null) d.perUserLimit = v.per_user_limit;
  if (v.description) d.description = v.description;
  if (v.image_url) d.imageUrl = v.image_url;
  return d;
}
