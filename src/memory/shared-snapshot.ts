import { createFirstReads, type FirstRead, firstValue } from "./first-reads";
import { createLeases, type Lease } from "./leases";

/**
 * One upstream feed per isolate or process: the latest value of every watched key, kept as FINISHED
 * values in memory and shared by all streams. When the snapshot is older than `maxAgeMs`, the first
 * stream loop that notices refreshes it with its own I/O (one batched read for every watched key) and
 * stores the result; the others only read memory and never await that read. So reads per second are
 * bounded by `1000 / maxAgeMs`, whatever the number of watchers.
 *
 * @example
 * const sales = createSharedSnapshot<SaleRecord>({ maxAgeMs: 250 });
 * const lease = sales.watch(saleId, Date.now());
 * await sales.refresh(Date.now(), (ids) => readSales(redis, ids)); // no-op when fresh or in hand
 * sales.get(saleId); // the latest finished value
 */
export type SharedSnapshot<V> = {
  watch(key: string, now: number): Lease;
  get(key: string): V | undefined;
  /** The value if it was read within two refresh intervals of `now` (a connecting stream may use it). */
  getFresh(key: string, now: number): V | undefined;
  /** Stores a value read at `now` by a connecting stream (its own read). */
  put(key: string, value: V, now: number): void;
  /**
   * A connecting stream's first value: the fresh one in hand, else one read per key (a few keys at a
   * time) for every opening of the isolate, the others waiting for its value on timers (first-reads.ts).
   */
  first(key: string, read: () => Promise<V | undefined>): Promise<FirstRead<V>>;
  /** True when a `refresh` now would read (stale, and no other refresh in hand): a cheap check per tick. */
  due(now: number): boolean;
  /** Refreshes every watched key with `load` if the snapshot is stale and no other refresh is in hand. */
  refresh(now: number, load: (keys: string[]) => Promise<Map<string, V>>): Promise<void>;
  watchers(now: number): number;
};

export function createSharedSnapshot<V>(opts: {
  maxAgeMs: number;
  /** a refresh not finished after this long is given up (its request may be gone); default 5 s */
  takeOverMs?: number;
  /**
   * What is stored when `next` is read for a key holding `previous` (default: `next`); e.g. `keepSame`
   * keeps the previous frame, and its version, when nothing a stream writes changed.
   */
  merge?: (previous: V | undefined, next: V) => V;
  /**
   * Whether `next` was read after `held`, when the values carry their own order (a room's journal
   * position): a stream's own read and a refresh run at once, and the one stamped later by the process
   * clock may have reached the store first. Default: the later stamp.
   */
  later?: (held: V, next: V) => boolean;
}): SharedSnapshot<V> {
  const takeOverMs = opts.takeOverMs ?? 5_000;
  const leases = createLeases(Math.max(5_000, opts.maxAgeMs * 10));
  const values = new Map<string, { value: V; at: number }>();
  const firstReads = createFirstReads();
  let readAt = Number.NEGATIVE_INFINITY;
  let inHand: { generation: number; since: number } | null = null;
  let generation = 0;
  const merge = opts.merge ?? ((_previous: V | undefined, next: V) => next);
  const store = (key: string, value: V, at: number) => {
    const held = values.get(key);
    // a slower read started before a newer one finished never goes back in time
    if (held && (opts.later ? !opts.later(held.value, value) : held.at > at)) return;
    values.set(key, { value: merge(held?.value, value), at });
  };
  const due = (now: number) => now - readAt >= opts.maxAgeMs && !(inHand && now - inHand.since < takeOverMs);

  return {
    watch: (key, now) => leases.take(key, now),
    get: (key) => values.get(key)?.value,
    getFresh(key, now) {
      const entry = values.get(key);
      return entry && now - entry.at <= 2 * opts.maxAgeMs ? entry.value : undefined;
    },
    put: store,
    first: (key, read) =>
      firstValue({ entry: (k) => values.get(k), put: store }, firstReads, key, read, {
        maxAgeMs: opts.maxAgeMs,
        takeOverMs,
      }),
    watchers: (now) => leases.count(now),
    due,
    async refresh(now, load) {
      if (!due(now)) return;
      const keys = leases.keys(now);
      for (const k of values.keys()) if (!keys.includes(k)) values.delete(k);
      for (const k of firstReads.ended.keys()) if (!keys.includes(k)) firstReads.ended.delete(k);
      if (keys.length === 0) return;
      const mine = ++generation;
      inHand = { generation: mine, since: now };
      readAt = now;
      try {
        const fresh = await load(keys);
        if (mine !== generation) return;
        for (const [k, v] of fresh) store(k, v, now);
      } catch (error) {
        console.error("realtime feed refresh failed", error);
      } finally {
        if (inHand?.generation === mine) inHand = null;
      }
    },
  };
}
