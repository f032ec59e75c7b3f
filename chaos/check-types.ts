/** The checker's vocabulary: the rules, a violation, the figures it counts, its options. */
import type { Observed, OrderState } from "./observe";

export type Rule =
  | "oversold"
  | "balance"
  | "lost"
  | "duplicate"
  | "phantom"
  | "limit"
  | "paid-restored"
  | "restore"
  | "answer"
  | "unknown"
  | "ledger"
  | "unsettled"
  | "sale"
  | "scenario";

export type Violation = { rule: Rule; detail: string; orderId?: string; userId?: string };

export type CheckFigures = {
  operations: number;
  buys: { ok: number; failed: number; unknown: number };
  acknowledged: number;
  acknowledgedUnits: number;
  unknownBuys: number;
  unknownThatReserved: number;
  lost: number;
  oversold: number;
  duplicates: number;
  stock: number;
  remaining: number;
  liveUnits: number;
  orders: Record<OrderState["status"], number>;
  deadLetters: number;
};

export type CheckResult = { saleId: string; violations: Violation[]; figures: CheckFigures; ok: boolean };

export type CheckOptions = {
  /** Redis was rebuilt from Postgres: idempotency answers and finished ledger entries may be gone. */
  redisRebuilt?: boolean;
  /** no history to judge against: check the stores only (every order counts as explained) */
  stateOnly?: boolean;
  /** how long past its window an unpaid order may stay unexpired (contract: 30 s on the local stack) */
  expiryGraceSeconds?: number;
};

export type Add = (rule: Rule, detail: string, ids?: { orderId?: string; userId?: string }) => void;

/** One judgement under way: the observed state, the options, where violations go, the figures so far. */
export type Judging = { state: Observed; options: CheckOptions; add: Add; figures: CheckFigures };

export const LIVE = new Set(["queued", "awaiting_payment", "paid"]);
