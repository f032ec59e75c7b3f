import reserveStockLua from "../../lua/reserve-stock.lua";
import { StoreUnavailableError } from "../errors";
import type { RedisStore as Redis } from "../stores/redis-store";
import { codeOf, type ScriptReply } from "./codes";
import { type ReserveLimits, type ReserveRequest, reserveScriptCall } from "./reserve-call";
import { defineScript, runScript } from "./script";

export { type ReserveLimits, type ReserveLine, type ReserveRequest, reserveScriptCall } from "./reserve-call";

export const reserveStockScript = defineScript(
  "reserve-stock",
  reserveStockLua,
  "ec51ed6e4427e3e991ea0fdda656f01497f1f568",
);

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
  /** `variants`: a drop's short lines, each with what its variant has left */
  | { kind: "insufficient_stock"; remaining: number; variants?: ShortLine[] }
  /** `replay`: the first answer to the same key, given again; it says nothing about the stock now */
  | { kind: "sold_out"; replay?: true }
  /** the attempt was given up and voided (void-reservation.lua): nothing is reserved under its id */
  | { kind: "voided" }
  /** a queue or draw sale's keyed buy without a valid admission, and its key has no first answer */
  | { kind: "not_admitted" };

/** A cart line asking more than its variant has left. */
export type ShortLine = { variantId: string; remaining: number };

/** The script's JSON list of short lines (absent for a sale of one variant). */
function shortLines(value: unknown): ShortLine[] | undefined {
  if (typeof value !== "string" || value === "") return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    if (!Array.isArray(parsed)) return undefined;
    return parsed.map((l: { variantId?: unknown; remaining?: unknown }) => ({
      variantId: String(l.variantId),
      remaining: Number(l.remaining),
    }));
  } catch {
    return undefined;
  }
}

/** How long one attempt may spend learning its outcome, from its first run (each run: ≤ 2 s). */
export const RESOLVE_WINDOW_MS = 8_000;
const FIRST_RERUN_DELAY_MS = 100;
const MAX_RERUN_DELAY_MS = 1_000;

const CODES = [
  "OK",
  "NOT_INITIALISED",
  "RATE_LIMITED",
  "NOT_STARTED",
  "ENDED",
  "PAUSED",
  "ALREADY_PURCHASED",
  "LIMIT_EXCEEDED",
  "INSUFFICIENT_STOCK",
  "SOLD_OUT",
  "VOIDED",
  "RESTORING",
  "NOT_ADMITTED",
] as const;

/** The one place reserve-stock.lua's replies are read (see the script's header). */
export function decodeReserveReply(reply: ScriptReply): ReserveOutcome {
  const [, a, b, c, d, e, f, g] = reply;
  switch (codeOf("reserve-stock", reply, CODES)) {
    case "OK":
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
    case "NOT_INITIALISED":
      return { kind: "not_initialised" };
    case "RATE_LIMITED":
      return { kind: "rate_limited", retryAfterMs: Number(a) };
    case "NOT_STARTED":
      return { kind: "not_started" };
    case "ENDED":
      return { kind: "ended" };
    case "PAUSED":
      return { kind: "paused" };
    case "ALREADY_PURCHASED":
      return { kind: "already_purchased", held: Number(a) };
    case "LIMIT_EXCEEDED":
      return { kind: "limit_exceeded", mayStillBuy: Number(a) };
    case "INSUFFICIENT_STOCK": {
      const variants = shortLines(c);
      return variants
        ? { kind: "insufficient_stock", remaining: Number(a), variants }
        : { kind: "insufficient_stock", remaining: Number(a) };
    }
    case "SOLD_OUT":
      return Number(b ?? 0) === 1 ? { kind: "sold_out", replay: true } : { kind: "sold_out" };
    case "VOIDED":
      return { kind: "voided" };
    case "RESTORING":
      return { kind: "restoring", retryAfterMs: Number(a) };
    case "NOT_ADMITTED":
      return { kind: "not_admitted" };
  }
}

const realClock = {
  now: () => Date.now(),
  sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
};

/**
 * One buy attempt: rate limits, window, allowance, stock, ledger and outbox in one EVALSHA (one Redis
 * round trip).
 *
 * A run that fails without a reply (a timeout, a dropped connection, the REST endpoint's 5xx) has an
 * unknown outcome: Redis may have committed it. The attempt is then run again with the same order id
 * (and Idempotency-Key) until one run is answered: every run is the same attempt, so a later run finds
 * an earlier one's reservation and returns it as a replay (reserve-stock.lua checks the order id
 * first), or reserves now if no earlier run did. A re-run is flagged as one: its refusal fences the
 * order id, so an earlier run still on its way cannot reserve behind the refusal the shopper is given.
 *
 * When no run is answered within `windowMs`, the attempt fails with {@link StoreUnavailableError}: a run
 * may still have committed, or may still commit (one held in the REST layer). The buy decision then
 * voids the attempt before answering 503 (src/buy/void-attempt.ts). A run still unanswered when the
 * window ends is not waited for (its late answer is the void's business), so this ends with the window.
 */
export async function reserveStock(
  redis: Redis,
  req: ReserveRequest,
  limits: ReserveLimits,
  clock: { now(): number; sleep(ms: number): Promise<void> } = realClock,
  windowMs: number = RESOLVE_WINDOW_MS,
): Promise<ReserveOutcome> {
  const first = reserveScriptCall(req, limits);
  const rerun = reserveScriptCall({ ...req, rerun: true }, limits);
  const deadline = clock.now() + windowMs;
  let delay = FIRST_RERUN_DELAY_MS;
  for (let run = 0; ; run++) {
    const { keys, args } = run === 0 ? first : rerun;
    let reply: ScriptReply;
    try {
      reply = await withinWindow(
        runScript<ScriptReply>(redis, reserveStockScript, keys, args),
        deadline - clock.now(),
      );
    } catch (error) {
      if (clock.now() + delay >= deadline) throw new StoreUnavailableError("redis", error);
      await clock.sleep(delay);
      delay = Math.min(delay * 2, MAX_RERUN_DELAY_MS);
      continue;
    }
    return decodeReserveReply(reply);
  }
}

/** `run`, or a rejection once `ms` (the window's time left) pass without its answer. */
function withinWindow<T>(run: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("no answer within the resolve window")), Math.max(0, ms));
  });
  return Promise.race([run, late]).finally(() => clearTimeout(timer));
}
