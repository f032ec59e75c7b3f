import type { ScriptReply } from "./scripts";

/** What one buy attempt came to: the reservation script's return codes as values. */
export type ReserveOutcome =
  | {
      kind: "reserved";
      orderId: string;
      quantity: number;
      expiresAt: number;
      remaining: number;
      epoch: number;
      /** the first answer to the same key or order id, given again: nothing new was reserved */
      replay: boolean;
      /** a replay whose order is still in the outbox: its write may never have been published */
      pending: boolean;
    }
  | { kind: "not_initialised" }
  | { kind: "rate_limited"; retryAfterMs: number }
  | { kind: "not_started" }
  | { kind: "ended" }
  /** paused by an operator */
  | { kind: "paused" }
  /** in a rebuild's quiet period after a store loss (not an operator's pause): buy again after `retryAfterMs` */
  | { kind: "restoring"; retryAfterMs: number }
  | { kind: "already_purchased"; held: number }
  | { kind: "limit_exceeded"; mayStillBuy: number }
  | { kind: "insufficient_stock"; remaining: number }
  /** `replay`: the first answer to the same key, given again; it says nothing about the stock now */
  | { kind: "sold_out"; replay?: true }
  /** the attempt was given up and voided (void-reservation.lua): nothing is reserved under its id */
  | { kind: "voided" };

/** The one place reserve-stock.lua's return codes are read (see the script's header). */
export function decodeReserveReply(reply: ScriptReply): ReserveOutcome {
  const [code, a, b, c, d, e, f, g] = reply;
  switch (Number(code)) {
    case 1:
      return {
        kind: "reserved",
        orderId: String(a),
        quantity: Number(b),
        expiresAt: Number(c),
        remaining: Number(d),
        epoch: Number(e ?? 1),
        replay: Number(f ?? 0) === 1,
        pending: Number(g ?? 0) === 1,
      };
    case 2:
      return { kind: "not_initialised" };
    case 3:
      return { kind: "rate_limited", retryAfterMs: Number(a) };
    case 4:
      return { kind: "not_started" };
    case 5:
      return { kind: "ended" };
    case 6:
      return { kind: "paused" };
    case 7:
      return { kind: "already_purchased", held: Number(a) };
    case 8:
      return { kind: "limit_exceeded", mayStillBuy: Number(a) };
    case 9:
      return { kind: "insufficient_stock", remaining: Number(a) };
    case 10:
      return Number(b ?? 0) === 1 ? { kind: "sold_out", replay: true } : { kind: "sold_out" };
    case 11:
      return { kind: "voided" };
    case 12:
      return { kind: "restoring", retryAfterMs: Number(a) };
    default:
      throw new Error(`reserve-stock returned an unknown code: ${String(code)}`);
  }
}
