/**
 * A seeded crowd of shoppers for one queue sale (room-shopper.ts): who pays, cancels, lets the order
 * expire or never buys, who watches a stream or polls, in a closed loop of joins (`joinConcurrency` at a
 * time; each shopper then lives on its own while the next joins). Runs in a forked load process for the
 * bench (crowd-load.ts) and in the chaos scenario's own process at CI size. `summarizeCrowd` keeps what
 * the checker needs (chaos/room-rules.ts).
 *
 * @example
 * const records = await runCrowd(shop, crowdPlans({ users: 2_000, seed: 1 }), { joinConcurrency: 16, maxStreams: 500, deadline });
 */

import type { RoomShop } from "./room-shop";
import { type Intent, Shopper, type ShopperPlan, type ShopperRecord } from "./room-shopper";
import { prng } from "./scenario";

export type CrowdMix = { pay: number; cancel: number; expire: number; never: number; stream: number };

/** Most pay; some cancel, some walk away from the order, some never buy; four in ten watch a stream. */
export const DEFAULT_MIX: CrowdMix = { pay: 0.74, cancel: 0.08, expire: 0.08, never: 0.1, stream: 0.4 };

/** Shopper `i` of `users` is `${prefix}${i}`; its plan depends only on the seed and i. */
export function crowdPlans(o: {
  users: number;
  seed: number;
  prefix?: string;
  mix?: CrowdMix;
}): ShopperPlan[] {
  const mix = o.mix ?? DEFAULT_MIX;
  const rnd = prng(o.seed);
  return Array.from({ length: o.users }, (_, i) => {
    const r = rnd();
    const intent: Intent =
      r < mix.pay
        ? "pay"
        : r < mix.pay + mix.cancel
          ? "cancel"
          : r < mix.pay + mix.cancel + mix.expire
            ? "expire"
            : "never";
    return {
      userId: `${o.prefix ?? "c"}${i}`,
      intent,
      stream: rnd() < mix.stream,
      quantity: rnd() < 0.6 ? 1 : 2,
      delayMs: Math.round(rnd() * 800),
    };
  });
}

export type CrowdOptions = {
  joinConcurrency: number;
  maxStreams: number;
  deadline: number;
  /** called once every shopper has joined (or given up) */
  onJoinsDone?: () => void;
};

/** Joins every shopper (closed loop), lets each live until it is done or the deadline; their records. */
export async function runCrowd(
  shop: RoomShop,
  plans: ShopperPlan[],
  o: CrowdOptions,
): Promise<ShopperRecord[]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), Math.max(0, o.deadline - Date.now()));
  let streams = 0;
  const streamsFree = () => streams < o.maxStreams;
  const shoppers = plans.map((p) => new Shopper(shop, p));
  const lives: Promise<void>[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: o.joinConcurrency }, async () => {
      while (next < shoppers.length && !controller.signal.aborted) {
        const s = shoppers[next++] as Shopper;
        if (!(await s.join(controller.signal))) continue;
        const counted = s.record.stream && streamsFree();
        if (counted) streams++;
        lives.push(s.live(controller.signal, () => counted).finally(() => counted && streams--));
      }
    }),
  );
  o.onJoinsDone?.();
  await Promise.all(lives);
  clearTimeout(timer);
  return shoppers.map((s) => s.record);
}

/** What the checker needs of a crowd's records: counts, who was told will_not_get, the admitted buys, problems. */
export type CrowdSummary = {
  shoppers: number;
  joined: number;
  streams: number;
  told: Record<Verdict | "none", number>;
  ends: Record<ShopperRecord["end"], number>;
  willNotGet: string[];
  admitted: { userId: string; units: number; until: number; buy?: ShopperRecord["buy"]; intent: Intent }[];
  actions: Record<string, number>;
  /** every join answer by status, and the time from the first try to the ticket (ms) */
  joinAnswers: Record<string, number>;
  joinMs: { p50: number; p99: number; max: number };
  problems: string[];
  problemCount: number;
};

type Verdict = ShopperRecord["told"][number];

export function summarizeCrowd(records: ShopperRecord[]): CrowdSummary {
  const told: CrowdSummary["told"] = {
    will_get: 0,
    may_get: 0,
    will_not_get: 0,
    admitted: 0,
    lapsed: 0,
    none: 0,
  };
  const ends = { will_not_get: 0, lapsed: 0, acted: 0, left: 0, waiting: 0, join_failed: 0 };
  const s: CrowdSummary = {
    shoppers: records.length,
    joined: 0,
    streams: 0,
    told,
    ends,
    willNotGet: [],
    admitted: [],
    actions: {},
    joinAnswers: {},
    joinMs: { p50: 0, p99: 0, max: 0 },
    problems: [],
    problemCount: 0,
  };
  const joinMs = records.map((r) => r.joinMs).sort((a, b) => a - b);
  const at = (q: number) => joinMs[Math.min(joinMs.length - 1, Math.floor(q * joinMs.length))] ?? 0;
  s.joinMs = { p50: at(0.5), p99: at(0.99), max: joinMs.at(-1) ?? 0 };
  for (const r of records) {
    for (const status of r.joins) s.joinAnswers[status] = (s.joinAnswers[status] ?? 0) + 1;
    ends[r.end]++;
    if (r.end !== "join_failed") s.joined++;
    if (r.stream) s.streams++;
    if (r.told.length === 0) told.none++;
    for (const v of new Set(r.told)) told[v]++;
    if (r.told.includes("will_not_get")) s.willNotGet.push(r.userId);
    if (r.admission)
      s.admitted.push({
        userId: r.userId,
        ...r.admission,
        intent: r.intent,
        ...(r.buy ? { buy: r.buy } : {}),
      });
    if (r.action) {
      const key = `${r.action.kind} ${r.action.status}${r.action.code ? ` ${r.action.code}` : ""}`;
      s.actions[key] = (s.actions[key] ?? 0) + 1;
    }
    s.problemCount += r.problems.length;
    for (const p of r.problems) if (s.problems.length < 50) s.problems.push(`${r.userId}: ${p}`);
  }
  return s;
}

/** Summaries of parts of one crowd (one per load process), as one. */
export function mergeSummaries(parts: CrowdSummary[]): CrowdSummary {
  const out = summarizeCrowd([]);
  for (const p of parts) {
    out.shoppers += p.shoppers;
    out.joined += p.joined;
    out.streams += p.streams;
    for (const k of Object.keys(p.told) as (keyof CrowdSummary["told"])[]) out.told[k] += p.told[k];
    for (const k of Object.keys(p.ends) as (keyof CrowdSummary["ends"])[]) out.ends[k] += p.ends[k];
    out.willNotGet.push(...p.willNotGet);
    out.admitted.push(...p.admitted);
    for (const [k, n] of Object.entries(p.actions)) out.actions[k] = (out.actions[k] ?? 0) + n;
    for (const [k, n] of Object.entries(p.joinAnswers)) out.joinAnswers[k] = (out.joinAnswers[k] ?? 0) + n;
    for (const q of ["p50", "p99", "max"] as const) out.joinMs[q] = Math.max(out.joinMs[q], p.joinMs[q]);
    out.problems.push(...p.problems.slice(0, Math.max(0, 50 - out.problems.length)));
    out.problemCount += p.problemCount;
  }
  return out;
}
