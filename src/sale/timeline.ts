import { withRedis } from "../redis";
import { toRecord } from "../redis-reply";
import type { RedisStore as Redis } from "../stores/redis-store";
import { saleKeys } from "./keys";

/** Outcome names for the reservation script's codes, as the operator chart labels them. */
const OUTCOMES: Record<string, string> = {
  "1": "reserved",
  "3": "rateLimited",
  "4": "notStarted",
  "5": "ended",
  "6": "paused",
  "7": "limited",
  "8": "limited",
  "9": "soldOut",
  "10": "soldOut",
  "12": "restoring",
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
