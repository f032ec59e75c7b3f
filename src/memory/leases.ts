/**
 * Who is watching what in this isolate or process. Each stream holds a lease on a key and touches it on
 * every tick; a lease not touched for `staleMs` counts as gone. A runtime may drop a request's context
 * without running its `finally` (workerd does when the client disconnects), so counting fresh leases
 * instead of trusting releases keeps the stream cap and the watched set honest.
 *
 * @example
 * const leases = createLeases(5_000);
 * const lease = leases.take("sale-1", Date.now());
 * lease.touch(Date.now());
 * lease.release();
 */
export type Lease = { readonly key: string; touch(now: number): void; release(): void };

export type Leases = {
  take(key: string, now: number): Lease;
  /** Leases touched within `staleMs` of `now` (stale ones are forgotten on the way). */
  count(now: number): number;
  /** The keys with at least one fresh lease. */
  keys(now: number): string[];
};

export function createLeases(staleMs: number): Leases {
  const held = new Set<{ key: string; touchedAt: number }>();
  const sweep = (now: number) => {
    for (const l of held) if (now - l.touchedAt > staleMs) held.delete(l);
  };
  return {
    take(key, now) {
      const entry = { key, touchedAt: now };
      held.add(entry);
      return {
        key,
        touch(at) {
          entry.touchedAt = at;
          held.add(entry);
        },
        release() {
          held.delete(entry);
        },
      };
    },
    count(now) {
      sweep(now);
      return held.size;
    },
    keys(now) {
      sweep(now);
      return [...new Set([...held].map((l) => l.key))];
    },
  };
}
