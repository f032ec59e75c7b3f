import type { OrderRow } from "./order-view";

/** The shopper has no such order (an unknown id and another shopper's order are the same answer). */
type Unknown = { kind: "unknown" };

/**
 * What paying an order came to. `paid` also when it was paid before (no second charge); `expired` when
 * its payment window closed (this call may have expired it).
 */
export type PayOutcome =
  | { kind: "paid"; order: OrderRow }
  | Unknown
  | { kind: "cancelled" }
  | { kind: "expired" };

/**
 * What cancelling an order came to. `cancelled` also when it was cancelled before (its units are back
 * either way); `changed` when it left `awaiting_payment` between the read and the update.
 */
export type CancelOutcome =
  | { kind: "cancelled"; order: OrderRow }
  | Unknown
  | { kind: "paid" }
  | { kind: "expired" }
  | { kind: "changed" };

/** A refused pay or cancel: what the order routes turn into the contract's errors, through one table. */
export type OrderRefusal = Exclude<PayOutcome | CancelOutcome, { order: OrderRow }>;
