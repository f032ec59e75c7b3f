import type { RateCount } from "../memory/rate-counters";
import type { LimitDeps } from "../services";
import { withRedis } from "../stores/with-redis";

/** The shopper routes limited here, each counted on its own (the buy is limited inside its script). */
export type LimitedRoute =
  | "order-read"
  | "order-pay"
  | "order-cancel"
  | "order-checkout"
  | "order-events"
  | "sale-list"
  | "sale-read"
  | "sale-events"
  | "queue-challenge"
  | "queue-join"
  | "queue-read"
  | "queue-events"
  | "draw-read";

/** Who sent a request: the shopper when the route is signed in, and the client's address. */
export type Sender = { userId?: string; ip: string };

export type LimitOutcome = { kind: "allowed" } | { kind: "limited"; retryAfterMs: number };

/** A claim to the store not answered within this long is given up (its request may be gone). */
const CLAIM_STALE_MS = 3_000;

/** A request without a permit waits this long at most for another request's claim, looking every 2 ms. */
const CLAIM_WAIT_MS = 100;
const CLAIM_POLL_MS = 2;

/** Permits a process spends without asking the store: half the limit (a page never gets near it). */
export const localShare = (limit: number) => Math.ceil(limit / 2);

/** Permits one claim asks the store for, past the local share. */
const claimBlock = (limit: number) => Math.ceil(limit / 4);

/**
 * Limits one request to a shopper route: per user (SHOPPER_LIMIT_USER_PER_WINDOW, signed-in routes) and
 * per client address (SHOPPER_LIMIT_IP_PER_WINDOW), in fixed windows of RATE_LIMIT_WINDOW_SECONDS.
 *
 * Counted in the process's memory first: the first half of a limit costs no store command, so a page
 * (a few requests a second) never reaches the store for it. Past that share the process claims blocks
 * of a quarter of the limit from one Redis counter per route and window (HINCRBY + EXPIRE, one
 * pipeline), reporting what it let through on its own; once that counter reaches the limit, the rest of
 * the window is refused from memory. A flood from one token thus costs at most two claims a window. After
 * the first claim the next one starts in the background before the permits run out; a request that
 * finds none while another request's claim is under way looks again for up to 100 ms (it never awaits
 * that request's I/O), then is refused.
 *
 * Across processes (or isolates): exactly the limit in one; with P processes serving one subject, at
 * most the limit plus (P − 1) local shares a window. If Redis is unreachable, each process limits on
 * its own, to the whole limit.
 *
 * @example
 * const outcome = await checkRouteLimits(deps, "order-read", { userId, ip });
 * if (outcome.kind === "limited") throw rateLimited(outcome.retryAfterMs); // the route's table
 */
export async function checkRouteLimits(
  d: LimitDeps,
  route: LimitedRoute,
  who: Sender,
): Promise<LimitOutcome> {
  const { config } = d;
  if (who.userId !== undefined) {
    const user = await take(d, route, `u:${who.userId}`, config.SHOPPER_LIMIT_USER_PER_WINDOW);
    if (user.kind === "limited") return user;
  }
  return take(d, route, `ip:${who.ip}`, config.SHOPPER_LIMIT_IP_PER_WINDOW);
}

/** One permit of `subject`'s limit on `route`, from memory or, past the local share, a claim. */
async function take(
  d: LimitDeps,
  route: LimitedRoute,
  subject: string,
  limit: number,
): Promise<LimitOutcome> {
  const windowMs = d.config.RATE_LIMIT_WINDOW_SECONDS * 1000;
  const window = Math.floor(d.now / windowMs);
  const count = d.memory.limits.current(`${route}|${subject}`, window, localShare(limit));
  const untilNextWindow = (window + 1) * windowMs - d.now;
  const claim = () => claimPermits(d, count, { key: counterKey(route, window, windowMs), subject, limit });
  for (let waited = 0; ; waited += CLAIM_POLL_MS) {
    if (count.used < count.granted) {
      count.used++;
      const low = count.granted - count.used <= Math.floor(claimBlock(limit) / 2);
      if (count.reported > 0 && low && !count.exhausted && !claiming(d, count)) d.defer(claim());
      return { kind: "allowed" };
    }
    if (count.exhausted) return { kind: "limited", retryAfterMs: untilNextWindow };
    // every claim grants a permit or finds the window used up, so this ends
    if (!claiming(d, count)) await claim();
    else if (waited >= CLAIM_WAIT_MS)
      return { kind: "limited", retryAfterMs: Math.min(1000, untilNextWindow) };
    else await sleep(CLAIM_POLL_MS);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const claiming = (d: LimitDeps, count: RateCount) =>
  count.claimedAt !== null && d.now - count.claimedAt < CLAIM_STALE_MS;

/** The store's counter of one route's window: a hash, one field per user or address. */
function counterKey(route: LimitedRoute, window: number, windowMs: number): string {
  return `limits:rl:${route}:${window * windowMs}`;
}

/**
 * Adds to the window's counter in Redis what this process let through on its own plus one block, and
 * keeps the part of the block that fits under the limit. On a store failure, the process grants itself
 * the block within the whole limit (it limits alone until Redis answers again).
 */
async function claimPermits(
  d: LimitDeps,
  count: RateCount,
  at: { key: string; subject: string; limit: number },
): Promise<void> {
  const block = claimBlock(at.limit);
  const unreported = Math.max(0, count.granted - count.reported);
  const adding = unreported + block;
  count.reported += adding;
  count.claimedAt = d.now;
  const ttlSeconds = d.config.RATE_LIMIT_WINDOW_SECONDS * 2 + 1;
  try {
    const [total] = await withRedis(() =>
      d.redis
        .pipeline()
        .hincrby(at.key, at.subject, adding)
        .expire(at.key, ttlSeconds)
        .exec<[number, number]>(),
    );
    const before = Number(total) - adding;
    const fits = Math.min(adding, Math.max(0, at.limit - before));
    count.granted += Math.max(0, fits - unreported);
    if (Number(total) >= at.limit) count.exhausted = true;
  } catch (error) {
    console.error("rate limit claim failed; limiting in this process alone", error);
    count.reported -= adding;
    count.granted += Math.max(0, Math.min(block, at.limit - count.granted));
    if (count.granted >= at.limit) count.exhausted = true;
  } finally {
    count.claimedAt = null;
  }
}
