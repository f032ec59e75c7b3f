import { saleKeys } from "./keys";
import { TIMELINE_TTL_SECONDS } from "./timeline";

/*
 * reserve-stock.lua's KEYS and ARGV, apart from the module that runs it (reserve.ts imports the script's
 * text, which only the bundlers and vitest load): the tests' Lua helpers, the chaos scenarios and the
 * benchmark's baseline call the script through this layout from plain Node (tsx) too.
 */

export type ReserveRequest = {
  saleId: string;
  orderId: string;
  userId: string;
  ip: string;
  quantity: number;
  idempotencyKey: string | null;
  now: number;
  /** a run of an attempt already run once without a reply (see reserveStock in reserve.ts) */
  rerun?: boolean;
  /**
   * the units the shopper's admission holds (queue and draw sales): the allowance when lower than the
   * limit; -1 for a keyed attempt without a valid admission (only its key's first answer is given back)
   */
  admittedUnits?: number;
  /** the cart's lines (their quantities add up to `quantity`), written into the order's documents */
  lines?: ReserveLine[];
  /** the sale keeps units per variant (a drop of several): every line is checked and taken there */
  perVariant?: boolean;
};

/** One line of a cart as the script takes it: the unit price and the variant's own cap (0: none). */
export type ReserveLine = { variantId: string; quantity: number; priceCents: number; cap: number };

export type ReserveLimits = { userPerWindow: number; ipPerWindow: number; windowMs: number };

const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

/**
 * KEYS and ARGV for reserve-stock.lua, in the order its header documents: the one place that layout is
 * written down in TypeScript (the tests and the benchmark call the script through it too).
 */
export function reserveScriptCall(
  req: ReserveRequest,
  limits: ReserveLimits,
): { keys: string[]; args: string[] } {
  const k = saleKeys(req.saleId);
  const keys = [k.meta, k.stock, k.holdings, k.ledger, k.orders, k.outbox];
  keys.push(k.idempotency(req.userId, req.idempotencyKey ?? "-"), k.userRate(req.userId), k.ipRate(req.ip));
  keys.push(k.timeline);
  if (req.perVariant) keys.push(k.variantStock, k.variantHoldings);
  const args = [req.now, req.orderId, req.userId, req.quantity, req.idempotencyKey === null ? "0" : "1"];
  args.push(IDEMPOTENCY_TTL_SECONDS, limits.userPerWindow, limits.ipPerWindow, limits.windowMs);
  args.push(TIMELINE_TTL_SECONDS, req.rerun ? "1" : "0");
  const lines = req.lines ?? [];
  if (req.admittedUnits !== undefined || lines.length > 0) args.push(req.admittedUnits ?? "");
  if (lines.length > 0) {
    args.push(lines.length, req.perVariant ? "1" : "0");
    for (const l of lines) args.push(l.variantId, l.quantity, l.priceCents, l.cap);
  }
  return { keys, args: args.map(String) };
}
