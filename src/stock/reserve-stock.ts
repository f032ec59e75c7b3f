import { StoreUnavailableError } from "../errors";
import type { RedisStore as Redis } from "../stores/redis-store";
import { type ReserveLimits, type ReserveRequest, reserveScriptCall } from "./reserve-call";
import { decodeReserveReply, type ReserveOutcome } from "./reserve-outcome";
import { runScript, type ScriptReply } from "./script";

/** How long one attempt may spend learning its outcome, from its first run (each run: ≤ 2 s). */
export const RESOLVE_WINDOW_MS = 8_000;
const FIRST_RERUN_DELAY_MS = 100;
const MAX_RERUN_DELAY_MS = 1_000;

/**
 * One buy attempt: rate limits, window, allowance, stock, ledger and outbox in one EVALSHA (one Redis
 * round trip).
 *
 * A run that fails without a reply (a timeout, a dropped connection, the REST endpoint's 5xx) has an
 * unknown outcome: Redis may have committed it. The attempt is then run again with the same order id
 * (and Idempotency-Key) until one run is answered: every run is the same attempt, so a later run finds
 * an earlier one's reservation and returns it as a replay (reserve-stock.lua checks the order id
 * first), or reserves now if no earlier run did. The outcome is certain only from a reply. A re-run
 * is flagged as one: its refusal fences the order id (reserve-stock.lua), so an earlier run still on
 * its way cannot reserve behind the refusal the shopper is given.
 *
 * When no run is answered within the window ({@link RESOLVE_WINDOW_MS} unless the caller passes the
 * `BUY_RESOLVE_WINDOW_MS` setting), the store has been unreachable for that whole time and the attempt
 * fails with {@link StoreUnavailableError}: a run may still have committed, or may still commit (one
 * held in the REST layer). The buy route then voids the attempt before answering 503 (see
 * src/buy/void-attempt.ts).
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
      reply = await runScript(redis, "reserveStock", keys, args);
    } catch (error) {
      if (clock.now() + delay >= deadline) throw new StoreUnavailableError("redis", error);
      await clock.sleep(delay);
      delay = Math.min(delay * 2, MAX_RERUN_DELAY_MS);
      continue;
    }
    return decodeReserveReply(reply);
  }
}

const realClock = {
  now: () => Date.now(),
  sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
};
