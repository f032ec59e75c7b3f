/**
 * One subject's requests to one route in one fixed window, as this process counted them
 * (src/limits/route-limits.ts decides with it; the store is asked only past the local share).
 */
export type RateCount = {
  /** the window's index: `floor(now / windowMs)` */
  readonly window: number;
  /** requests this process let through in the window */
  used: number;
  /** how many it may let through without asking: the local share, then what the store granted */
  granted: number;
  /** how many this process has added to the store's counter of the window */
  reported: number;
  /** when a claim to the store started (null when none is under way) */
  claimedAt: number | null;
  /** the store said the window is used up: nothing more once `granted` is spent */
  exhausted: boolean;
};

/**
 * The counts of the current window per key, bounded: a key's count starts over with each window, and
 * past `maxKeys` the key whose window started longest ago is forgotten (a count is re-inserted when its
 * window turns, so the map stays in window order and the oldest is always first).
 *
 * @example
 * const counters = createRateCounters(10_000);
 * const count = counters.current("order-read|u:alice", Math.floor(Date.now() / 1000), 10);
 * if (count.used < count.granted) count.used++;
 */
export type RateCounters = {
  /** The key's count in `window` (a fresh one, holding `share` permits, when its window turned). */
  current(key: string, window: number, share: number): RateCount;
  readonly size: number;
};

export function createRateCounters(maxKeys: number): RateCounters {
  const counts = new Map<string, RateCount>();
  return {
    current(key, window, share) {
      const held = counts.get(key);
      // a request that read the clock just before the window turned counts in the new one
      if (held && held.window >= window) return held;
      const fresh: RateCount = {
        window,
        used: 0,
        granted: share,
        reported: 0,
        claimedAt: null,
        exhausted: false,
      };
      counts.delete(key);
      counts.set(key, fresh);
      while (counts.size > maxKeys) {
        const oldest = counts.keys().next();
        if (oldest.done) break;
        counts.delete(oldest.value);
      }
      return fresh;
    },
    get size() {
      return counts.size;
    },
  };
}
