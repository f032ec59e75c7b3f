/**
 * The ledger entry: what a sale's ledger hash (`saleKeys(id).ledger`) holds, one field per event that
 * moved (or fenced) units, its value a JSON object. The Lua scripts write most entries with cjson and
 * their headers point here; TypeScript writes and reads them only through this module.
 *
 *   field               type       written by
 *   "r:<orderId>"       reserve    reserve-stock.lua; debit-stock.lua (`late`); rebuild-sale.lua (`kept`);
 *                                  rebuildSale (`rebuilt`); `claimed` is set by reserve-stock.lua
 *   "x:<orderId>"       restore    restore-stock.lua; void-reservation.lua and a re-run's refusal in
 *                                  reserve-stock.lua (reason "void"; `counted: false`: a tombstone)
 *   "a:<adjustmentId>"  adjust     adjust-stock.lua; rebuild-sale.lua (`kept`: not yet recorded in Postgres)
 *
 * Every entry carries its `type` and id, which agree with its field (the scripts look entries up by
 * field and never read `type`). Times are epoch ms; `before`/`after` are the units remaining around
 * the change; `epoch` is the Redis generation (meta "epoch"; entries from before generations have
 * none and count as 1).
 *
 * @example
 * const entry: LedgerEntry = { type: "reserve", orderId, userId, quantity: 2, at: now, epoch: 2, rebuilt: true };
 * ledger[ledgerFieldOf(entry)] = encodeLedgerEntry(entry);      // "r:<orderId>" -> JSON
 * parseLedgerEntry(ledger[ledgerField("reserve", orderId)]);     // the entry again (null if not one)
 */
import { z } from "zod";
import type { QueuedOrder } from "./queued-order";

const ms = z.number();
const units = z.number();

const reservationSchema = z.object({
  type: z.literal("reserve"),
  orderId: z.string(),
  userId: z.string(),
  quantity: units,
  /** when the units were taken (kept and rebuilt entries: the order's creation) */
  at: ms,
  /** the end of the payment window; late entries have none */
  expiresAt: ms.optional(),
  epoch: z.number().optional(),
  /** remaining before and after the reservation; kept and rebuilt entries have none */
  before: units.optional(),
  after: units.optional(),
  /** a keyed replay told the shopper this order id: no void takes it back */
  claimed: z.boolean().optional(),
  /** written by a rebuild from Postgres (rebuildSale) */
  rebuilt: z.boolean().optional(),
  /** a queued order the old Redis held that a rebuild kept (rebuild-sale.lua) */
  kept: z.boolean().optional(),
  /** counted when its order write arrived, this Redis having lost the reservation (debit-stock.lua) */
  late: z.boolean().optional(),
  /** the cart's lines (reservations made since variants; see lua/reserve-stock.lua) */
  items: z.array(z.object({ variantId: z.string(), quantity: units, priceCents: z.number() })).optional(),
});

const restoreSchema = z.object({
  type: z.literal("restore"),
  orderId: z.string(),
  userId: z.string(),
  quantity: units,
  before: units,
  after: units,
  at: ms,
  /** "expired", "cancelled", "void", … */
  reason: z.string(),
  /** false when nothing was given back (the order was never counted here) */
  counted: z.boolean().optional(),
  /** a drop's lines given back to their variants (restore-stock.lua, void-reservation.lua) */
  items: z.array(z.object({ variantId: z.string(), quantity: units })).optional(),
});

const adjustmentSchema = z.object({
  type: z.literal("adjust"),
  adjustmentId: z.string(),
  delta: units,
  before: units,
  after: units,
  at: ms,
  epoch: z.number().optional(),
  /** applied in a Redis a rebuild replaced, not yet recorded in Postgres: carried into the new epoch */
  kept: z.boolean().optional(),
  /** the variant adjusted, on a drop of several variants (a sale of one has none: its only variant) */
  variantId: z.string().optional(),
});

const ledgerEntrySchema = z.discriminatedUnion("type", [reservationSchema, restoreSchema, adjustmentSchema]);

export type ReservationEntry = z.infer<typeof reservationSchema>;
export type RestoreEntry = z.infer<typeof restoreSchema>;
export type AdjustmentEntry = z.infer<typeof adjustmentSchema>;
export type LedgerEntry = z.infer<typeof ledgerEntrySchema>;

const PREFIX = { reserve: "r:", restore: "x:", adjust: "a:" } as const satisfies Record<
  LedgerEntry["type"],
  string
>;

/** The field of the entry of `type` about `id` (an order id; for an adjustment, its id). */
export function ledgerField(type: LedgerEntry["type"], id: string): string {
  return `${PREFIX[type]}${id}`;
}

/** The field `entry` is stored under. */
export function ledgerFieldOf(entry: LedgerEntry): string {
  return ledgerField(entry.type, entry.type === "adjust" ? entry.adjustmentId : entry.orderId);
}

/** What a field holds and about which id; null for a field that is none of the three. */
export function parseLedgerField(field: string): { type: LedgerEntry["type"]; id: string } | null {
  const prefix = field.slice(0, 2);
  for (const type of ["reserve", "restore", "adjust"] as const)
    if (PREFIX[type] === prefix) return { type, id: field.slice(2) };
  return null;
}

/** The stored JSON of an entry: its known fields only, checked, so that it always parses back. */
export function encodeLedgerEntry(entry: LedgerEntry): string {
  return JSON.stringify(ledgerEntrySchema.parse(entry));
}

/** An entry as stored (by the scripts or {@link encodeLedgerEntry}); null when the value is not one. */
export function parseLedgerEntry(json: string | null | undefined): LedgerEntry | null {
  if (!json) return null;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return null;
  }
  const parsed = ledgerEntrySchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** The order a reservation entry counts: to republish it, or to say what a void found. */
export function reservedOrder(saleId: string, entry: ReservationEntry): QueuedOrder {
  return {
    orderId: entry.orderId,
    saleId,
    userId: entry.userId,
    quantity: entry.quantity,
    createdAt: entry.at,
    expiresAt: entry.expiresAt ?? entry.at,
    epoch: entry.epoch ?? 1,
    ...(entry.items ? { items: entry.items } : {}),
  };
}
