import { toRecord } from "../stores/redis-reply";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { ScriptCode } from "./codes";
import { saleKeys } from "./keys";

/** How long a sale's timeline is kept after its last count. */
export const TIMELINE_TTL_SECONDS = 7 * 24 * 60 * 60;

/** Outcome names for the reservation script's codes, as the operator chart labels them. */
const OUTCOMES: Record<string, string> = {
  [ScriptCode.OK]: "reserved",
  [ScriptCode.RATE_LIMITED]: "rateLimited",
  [ScriptCode.NOT_STARTED]: "notStarted",
  [ScriptCode.ENDED]: "ended",
  [ScriptCode.PAUSED]: "paused",
  [ScriptCode.ALREADY_PURCHASED]: "limited",
  [ScriptCode.LIMIT_EXCEEDED]: "limited",
  [ScriptCode.INSUFFICIENT_STOCK]: "soldOut",
  [ScriptCode.SOLD_OUT]: "soldOut",
  [ScriptCode.RESTORING]: "restoring",
};

export type TimelinePoint = { second: number; counts: Record<string, number> };

/**
 * Outcomes per second for a sale's last `windowSeconds` (the reservation script counts them in the
 * same round trip), for the operator's live chart.
 */
export async function readTimeline(
  redis: Redis,
  saleId: string,
  now: number,
  windowSeconds = 300,
): Promise<{ points: TimelinePoint[]; serverTime: string }> {
  const raw = toRecord(await withRedis(() => redis.hgetall(saleKeys(saleId).timeline)));
  const since = Math.floor(now / 1000) - windowSeconds;
  const bySecond = new Map<number, Record<string, number>>();
  for (const [field, value] of Object.entries(raw ?? {})) {
    const [s, code] = field.split(":");
    const second = Number(s);
    const name = OUTCOMES[code ?? ""];
    if (!name || second < since) continue;
    const counts = bySecond.get(second) ?? {};
    counts[name] = (counts[name] ?? 0) + Number(value);
    bySecond.set(second, counts);
  }
  const points = [...bySecond.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([second, counts]) => ({ second, counts }));
  return { points, serverTime: new Date(now).toISOString() };
}

/**
 * Adds sold-out answers given without the script (from a process's sold-out memory) to the sales'
 * timelines, in one pipeline of HINCRBY: per sale, per unix second, how many.
 */
export function countSoldOutAnswers(
  redis: Redis,
  counts: Map<string, Map<number, number>>,
): Promise<unknown> {
  if (counts.size === 0) return Promise.resolve();
  const pipe = redis.pipeline();
  for (const [saleId, bySecond] of counts) {
    const key = saleKeys(saleId).timeline;
    for (const [second, n] of bySecond) pipe.hincrby(key, `${second}:${ScriptCode.SOLD_OUT}`, n);
    pipe.expire(key, TIMELINE_TTL_SECONDS);
  }
  return pipe.exec();
}
