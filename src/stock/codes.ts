/**
 * The return codes of every Lua script in `lua/`, one table: a code means the same thing in every script
 * that returns it, and each script's header names its codes by these names (a test holds the headers
 * and this table together). A script's reply is `{code, …}` (or the bare code); its module in this
 * folder turns the reply into an outcome value, in one switch over these names.
 *
 * The reservation codes (1 to 11) are also stored: in the sale's timeline (`<second>:<code>`) and in the
 * answers kept per Idempotency-Key. They keep their numbers.
 */
export const ScriptCode = {
  /** The script did what it was asked: reserved, restored, adjusted, voided, set, rebuilt, released. */
  OK: 1,
  /** The sale's state is not in this Redis (lost, or not rebuilt yet): nothing changed. */
  NOT_INITIALISED: 2,
  RATE_LIMITED: 3,
  NOT_STARTED: 4,
  ENDED: 5,
  PAUSED: 6,
  ALREADY_PURCHASED: 7,
  LIMIT_EXCEEDED: 8,
  INSUFFICIENT_STOCK: 9,
  SOLD_OUT: 10,
  /** The buy attempt's order id was voided (or restored) before this run: nothing reserved. */
  VOIDED: 11,
  /** The order already has its restore entry ("x:"): it is final, nothing changed. */
  ALREADY_FINAL: 12,
  /** This adjustment id was applied before with the same delta: nothing changed. */
  ALREADY_APPLIED: 13,
  /** The change would take remaining below zero (units reserved stay reserved): nothing changed. */
  BELOW_RESERVED: 14,
  /** This adjustment id was applied before with another delta: nothing changed. */
  ID_REUSED: 15,
  /** No reservation of this order here: nothing to give back (a marker may be written). */
  NOT_RESERVED: 16,
  /** The shopper was told this reservation (a replay answered it): left alone. */
  CLAIMED: 17,
  /** The sale's Redis state is another generation (epoch) than the caller's: nothing changed. */
  OTHER_EPOCH: 18,
  /** A newer state is already in place (a newer rebuild, a later pause or resume): nothing changed. */
  STALE: 19,
  /** The sale's state was already there: nothing changed. */
  ALREADY_EXISTS: 20,
  /** The lock is not held by this caller's token: nothing deleted. */
  NOT_HELD: 21,
  /** The sale is in a rebuild's quiet period after a store loss (not an operator's pause): nothing reserved. */
  RESTORING: 22,
  /** The sale admits everyone (admission "open"): it has no waiting room. */
  NO_QUEUE: 23,
  /** A draw takes entries until its start: nothing changed. */
  ENTRIES_CLOSED: 24,
  /** A queue or draw sale's buy without a valid admission whose Idempotency-Key has no first answer: nothing changed. */
  NOT_ADMITTED: 25,
} as const;

export type ScriptCodeName = keyof typeof ScriptCode;

/** A script reply: an array whose first element is the code, or the bare code. */
export type ScriptReply = (string | number)[];

/**
 * The name of a reply's code, or an error naming the script when the code is not one it may return
 * (a script and its module out of step is a bug, never an outcome).
 */
export function codeOf<N extends ScriptCodeName>(script: string, reply: unknown, allowed: readonly N[]): N {
  const code = Number(Array.isArray(reply) ? reply[0] : reply);
  const name = allowed.find((n) => ScriptCode[n] === code);
  if (name === undefined) throw new Error(`${script} returned an unknown code: ${String(code)}`);
  return name;
}
