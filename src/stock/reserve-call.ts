import { saleKeys } from "./keys";

export type ReserveRequest = {
  saleId: string;
  orderId: string;
  userId: string;
  ip: string;
  quantity: number;
  idempotencyKey: string | null;
  now: number;
  /** a run of an attempt already run once without a reply (see reserve-stock.ts) */
  rerun?: boolean;
};

export type ReserveLimits = {
  userPerWindow: number;
  ipPerWindow: number;
  windowMs: number;
};

const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
export const TIMELINE_TTL_SECONDS = 7 * 24 * 60 * 60;

/**
 * KEYS and ARGV for reserve-stock.lua, in the order its header documents. The one place that layout
 * is written down in TypeScript (the tests and the benchmark call the script through it too).
 */
export function reserveScriptCall(
  req: ReserveRequest,
  limits: ReserveLimits,
): { keys: string[]; args: string[] } {
  const keys = saleKeys(req.saleId);
  return {
    keys: [
      keys.meta,
      keys.stock,
      keys.holdings,
      keys.ledger,
      keys.orders,
      keys.outbox,
      keys.idempotency(req.userId, req.idempotencyKey ?? "-"),
      keys.userRate(req.userId),
      keys.ipRate(req.ip),
      keys.timeline,
    ],
    args: [
      req.now,
      req.orderId,
      req.userId,
      req.quantity,
      req.idempotencyKey === null ? "0" : "1",
      IDEMPOTENCY_TTL_SECONDS,
      limits.userPerWindow,
      limits.ipPerWindow,
      limits.windowMs,
      TIMELINE_TTL_SECONDS,
      req.rerun ? "1" : "0",
    ].map(String),
  };
}
