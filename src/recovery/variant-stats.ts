import type { QueuedOrder } from "../stock/queued-order";
import type { VariantCounterRow } from "./stats-reads";

/** A variant's figures in the operator's stats: units, as the sale's are counted, and its invariant. */
export type VariantStats = {
  variantId: string;
  /** initial stock plus adjustments (a drop of several: as Postgres recorded them) */
  stock: number;
  /** units not reserved, as Redis holds them */
  remaining: number;
  paidUnits: number;
  /** units in queued, awaiting_payment and paid orders */
  liveUnits: number;
  /** units of expired or cancelled orders not yet back in Redis */
  pendingRestoreUnits: number;
  /** shoppers over this variant's own cap in either store */
  usersOverLimit: number;
};

/** What the variants' figures are made of: the sale's Redis reading, the Postgres rows, the sale's sums. */
export type VariantInputs = {
  /** a drop of several variants (Redis keeps `vstock` and `vholdings`) */
  tracked: boolean;
  rows: VariantCounterRow[];
  redis: {
    stock: number;
    remaining: number;
    variantStock: Record<string, string> | null;
    queued: QueuedOrder[];
  };
  /** "<variantId>:<userId>" of the Redis holdings per variant over the variant's cap */
  overCapInRedis: string[];
  overCapInPostgres: { variantId: string; userId: string }[];
  /** the sale's own figures: a sale of one variant is that variant */
  sale: { liveUnits: number; pendingRestoreUnits: number };
};

/**
 * Each variant's figures and what breaks the invariant per variant: stock = remaining + live units (+
 * units being restored), remaining not below zero, the variants' remaining adding up to the sale's, and
 * nobody over a variant's own cap. A sale of one variant is its variant: its figures are the sale's (only
 * its paid units are its own reading), and the sale's invariant is its invariant.
 */
export function variantStats(input: VariantInputs): { variants: VariantStats[]; breaks: string[] } {
  const { rows, redis } = input;
  const overCap = usersOverCap(input);
  if (!input.tracked) {
    const row = rows[0];
    const variantId = row?.variantId ?? "default";
    const only: VariantStats = {
      variantId,
      stock: redis.stock,
      remaining: redis.remaining,
      paidUnits: row?.paid ?? 0,
      liveUnits: input.sale.liveUnits,
      pendingRestoreUnits: input.sale.pendingRestoreUnits,
      usersOverLimit: overCap.get(variantId)?.size ?? 0,
    };
    // its cap is the sale's (the create body takes the lower): the sale's invariant says it
    return { variants: [only], breaks: [] };
  }
  const queued = queuedUnits(redis.queued);
  const variants = rows.map((row): VariantStats => {
    const remaining = Number(redis.variantStock?.[row.variantId] ?? 0);
    return {
      variantId: row.variantId,
      stock: row.stock,
      remaining,
      paidUnits: row.paid,
      liveUnits: (queued.get(row.variantId) ?? 0) + row.live - row.queuedLive,
      pendingRestoreUnits: row.unrestored - row.queuedUnrestored - row.givenBack + row.markedSince,
      usersOverLimit: overCap.get(row.variantId)?.size ?? 0,
    };
  });
  const breaks: string[] = [];
  for (const v of variants) {
    if (v.remaining < 0)
      breaks.push(`variant ${v.variantId}: remaining is ${v.remaining}: units were sold twice`);
    if (v.stock !== v.remaining + v.liveUnits + v.pendingRestoreUnits)
      breaks.push(
        `variant ${v.variantId}: stock ${v.stock} ≠ remaining ${v.remaining} + live ${v.liveUnits} + restoring ${v.pendingRestoreUnits}`,
      );
  }
  const sum = variants.reduce((total, v) => total + v.remaining, 0);
  if (sum !== redis.remaining)
    breaks.push(`the variants' remaining add up to ${sum}, the sale's remaining is ${redis.remaining}`);
  const stock = variants.reduce((total, v) => total + v.stock, 0);
  if (stock !== redis.stock)
    breaks.push(
      `the variants' stock adds up to ${stock} in Postgres, the sale's is ${redis.stock} in Redis (an adjustment not recorded in Postgres yet?)`,
    );
  return { variants, breaks: [...breaks, ...capBreaks(variants, rows)] };
}

/** The units each variant has in the queued orders (a document without lines: none of a drop's). */
function queuedUnits(queued: QueuedOrder[]): Map<string, number> {
  const units = new Map<string, number>();
  for (const order of queued)
    for (const item of order.items ?? [])
      units.set(item.variantId, (units.get(item.variantId) ?? 0) + item.quantity);
  return units;
}

/** The users over each variant's own cap, in either store. */
function usersOverCap(input: VariantInputs): Map<string, Set<string>> {
  const over = new Map<string, Set<string>>();
  const add = (variantId: string, userId: string) =>
    over.set(variantId, (over.get(variantId) ?? new Set()).add(userId));
  for (const field of input.overCapInRedis) {
    const at = field.indexOf(":");
    if (at > 0) add(field.slice(0, at), field.slice(at + 1));
  }
  for (const { variantId, userId } of input.overCapInPostgres) add(variantId, userId);
  return over;
}

function capBreaks(variants: VariantStats[], rows: VariantCounterRow[]): string[] {
  return variants
    .filter((v) => v.usersOverLimit > 0)
    .map((v) => {
      const cap = rows.find((r) => r.variantId === v.variantId)?.cap;
      return `variant ${v.variantId}: ${v.usersOverLimit} user(s) over its own limit of ${cap ?? "?"}`;
    });
}
