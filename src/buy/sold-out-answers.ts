import { saleKeys } from "../stock/keys";
import { TIMELINE_TTL_SECONDS } from "../stock/reserve-call";
import type { RedisStore as Redis } from "../stores/redis-store";

/** The reservation script's code for "sold out", under which the operator chart counts 410s. */
const SOLD_OUT_CODE = 10;
const FLUSH_EVERY_MS = 1_000;

/** Sold-out answers this isolate gave from memory, per sale and unix second, not yet in Redis. */
const pending = new Map<string, Map<number, number>>();
let flushedAt = 0;
let flushScheduled = false;

/**
 * Counts a 410 the isolate answered from its sold-out memory (no script ran, so the script could not
 * count it) in the sale's timeline, so the operator chart shows every sold-out answer. The counts are
 * kept in memory and written at most once a second per isolate: the request that finds no write
 * scheduled schedules one in its own background work (`defer`), due a second after the last, and
 * writes everything counted until then in one pipeline of HINCRBY. No request waits for it. A failed
 * write loses those counts: they only feed the chart.
 */
export function countSoldOutFromMemory(
  redis: Redis,
  saleId: string,
  now: number,
  defer: (p: Promise<unknown>) => void,
): void {
  const second = Math.floor(now / 1000);
  const bySecond = pending.get(saleId) ?? new Map<number, number>();
  bySecond.set(second, (bySecond.get(second) ?? 0) + 1);
  pending.set(saleId, bySecond);
  if (flushScheduled) return;
  flushScheduled = true;
  const wait = Math.max(0, flushedAt + FLUSH_EVERY_MS - now);
  defer(
    new Promise((resolve) => setTimeout(resolve, wait)).then(() => {
      flushScheduled = false;
      flushedAt = Date.now();
      return flush(redis);
    }),
  );
}

function flush(redis: Redis): Promise<unknown> {
  const batch = [...pending.entries()];
  pending.clear();
  if (batch.length === 0) return Promise.resolve();
  const pipe = redis.pipeline();
  for (const [id, counts] of batch) {
    const key = saleKeys(id).timeline;
    for (const [s, n] of counts) pipe.hincrby(key, `${s}:${SOLD_OUT_CODE}`, n);
    pipe.expire(key, TIMELINE_TTL_SECONDS);
  }
  return pipe.exec();
}

/** Forgets unwritten counts (tests). */
export function forgetMemoryAnswers(): void {
  pending.clear();
  flushedAt = 0;
  flushScheduled = false;
}
