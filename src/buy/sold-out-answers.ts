import type { Memory } from "../memory/memory";
import { countSoldOutAnswers } from "../stock/timeline";
import type { RedisStore as Redis } from "../stores/redis-store";

const FLUSH_EVERY_MS = 1_000;

/**
 * Counts a 410 the process answered from its sold-out memory (no script ran, so the script could not
 * count it) in the sale's timeline, so the operator chart shows every sold-out answer. The counts are
 * kept in memory and written at most once a second per process: the request that finds no write
 * scheduled schedules one in its own background work (`defer`), due a second after the last, and
 * writes everything counted until then in one pipeline of HINCRBY. No request waits for it. A failed
 * write loses those counts: they only feed the chart.
 */
export function countSoldOutFromMemory(
  d: { redis: Redis; memory: Pick<Memory, "soldOutAnswers">; defer: (p: Promise<unknown>) => void },
  saleId: string,
  now: number,
): void {
  const state = d.memory.soldOutAnswers;
  const second = Math.floor(now / 1000);
  const bySecond = state.pending.get(saleId) ?? new Map<number, number>();
  bySecond.set(second, (bySecond.get(second) ?? 0) + 1);
  state.pending.set(saleId, bySecond);
  if (state.flushScheduled) return;
  state.flushScheduled = true;
  const wait = Math.max(0, state.flushedAt + FLUSH_EVERY_MS - now);
  d.defer(
    new Promise((resolve) => setTimeout(resolve, wait)).then(() => {
      state.flushScheduled = false;
      state.flushedAt = Date.now();
      const counts = new Map(state.pending);
      state.pending.clear();
      return countSoldOutAnswers(d.redis, counts);
    }),
  );
}
