/**
 * How a connecting stream gets its first value without a read per stream: from the snapshot when it is
 * fresh; else ONE request of the isolate reads the key (at most {@link FIRST_READS_AT_ONCE} keys at a
 * time per feed) while the others look every 20 ms, on their own timers, for the value it stores, the
 * end it records, or its claim running out. Only plain values are shared (a claim's deadline, a read's
 * end): no request awaits another request's I/O (workerd forbids it, see STYLE.md). A recent snapshot
 * (within {@link RECENT_MS}) is never given up for a slow or failed read: after {@link STALE_WAIT_MS}
 * of waiting, or when the read fails, the stream starts from it and its feed brings the fresh value.
 * Without one, a failed read is read again, one reader at a time, until each opening's own wait
 * (`takeOverMs`) runs out: one slow reply in a burst does not refuse the crowd, a store that stays down
 * is answered unavailable after that wait.
 *
 * @example
 * const first = await feed.first(saleId, () => readOneSale(saleId));
 * if (first.kind === "absent") throw unknownSale();
 */
export type FirstRead<V> =
  | { kind: "value"; value: V }
  /** the read found nothing (an unknown key) */
  | { kind: "absent" }
  /** no value: the read failed (its error), or none finished in time (null) */
  | { kind: "unavailable"; error: unknown };

/** The first reads of one feed: who is reading which key until when, and how each key's last one ended. */
export type FirstReads = { reading: Map<string, number>; ended: Map<string, ReadEnd> };

/** How a key's first read ended, and when. */
export type ReadEnd = { at: number; outcome: "value" | "absent" | "failed"; error?: unknown };

/** Keys of one feed read at once for connecting streams; the others wait for a turn (or the refresh). */
export const FIRST_READS_AT_ONCE = 4;
/** A snapshot this recent is served rather than refused when no fresh value can be had. */
export const RECENT_MS = 30_000;
/** With a recent snapshot in hand, how long an opening waits for a fresh value before starting from it. */
export const STALE_WAIT_MS = 1_000;
const WAIT_STEP_MS = 20;
/** After a failed read, how long its key stays claimed: at most one read of it per pause while it fails. */
const RETRY_PAUSE_MS = 100;

export function createFirstReads(): FirstReads {
  return { reading: new Map(), ended: new Map() };
}

type Held<V> = {
  entry(key: string): { value: V; at: number } | undefined;
  put(key: string, value: V, at: number): void;
};
type Timing = {
  maxAgeMs: number;
  takeOverMs: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
};

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Ends kept per feed: the latest first (a waiter needs its key's for at most one claim's time). */
const ENDS_KEPT = 1_024;

/** Records how a key's read ended, forgetting the oldest ends past {@link ENDS_KEPT} (unknown keys too). */
function ended(reads: FirstReads, key: string, end: ReadEnd): void {
  reads.ended.delete(key);
  reads.ended.set(key, end);
  for (const oldest of reads.ended.keys()) {
    if (reads.ended.size <= ENDS_KEPT) break;
    reads.ended.delete(oldest);
  }
}

/** Claims in hand at `now` (forgetting the ones run out: their request may be gone). */
function inHand(reads: FirstReads, now: number): number {
  for (const [key, until] of reads.reading) if (until <= now) reads.reading.delete(key);
  return reads.reading.size;
}

export async function firstValue<V>(
  held: Held<V>,
  reads: FirstReads,
  key: string,
  read: () => Promise<V | undefined>,
  o: Omit<Timing, "now" | "sleep"> & Partial<Pick<Timing, "now" | "sleep">>,
): Promise<FirstRead<V>> {
  const t: Timing = { now: Date.now, sleep: defaultSleep, ...o };
  const since = t.now();
  const recent = (at: number) => {
    const entry = held.entry(key);
    return entry && at - entry.at <= RECENT_MS ? entry : undefined;
  };
  const fallback = (error: unknown): FirstRead<V> => {
    const entry = recent(t.now());
    return entry ? { kind: "value", value: entry.value } : { kind: "unavailable", error };
  };
  for (;;) {
    const now = t.now();
    const entry = held.entry(key);
    if (entry && now - entry.at <= 2 * t.maxAgeMs) return { kind: "value", value: entry.value };
    const end = reads.ended.get(key);
    if (end && end.at >= since) {
      if (end.outcome === "absent") return { kind: "absent" };
      // a failed read with no recent snapshot is read again (below, one reader at a time) while this
      // opening's own wait lasts
      if (end.outcome === "failed" && (recent(now) || now - since >= t.takeOverMs))
        return fallback(end.error);
      if (end.outcome === "value" && entry) return { kind: "value", value: entry.value };
    }
    const claimed = (reads.reading.get(key) ?? 0) > now;
    if (!claimed && inHand(reads, now) < FIRST_READS_AT_ONCE) {
      const first = await readFirst(held, reads, key, read, t);
      if (first.kind !== "unavailable" || t.now() - since >= t.takeOverMs) return first;
      await t.sleep(RETRY_PAUSE_MS);
      continue;
    }
    if (now - since >= (recent(now) ? STALE_WAIT_MS : t.takeOverMs)) return fallback(null);
    await t.sleep(WAIT_STEP_MS);
  }
}

/**
 * This request reads the key for every opening that waits on it: the value is stored and the read's end
 * recorded when the read finishes, whether or not this request still waits for it (with a recent
 * snapshot it waits {@link STALE_WAIT_MS} at most, then starts from the snapshot).
 */
async function readFirst<V>(
  held: Held<V>,
  reads: FirstReads,
  key: string,
  read: () => Promise<V | undefined>,
  t: Timing,
): Promise<FirstRead<V>> {
  const at = t.now();
  const until = at + t.takeOverMs;
  reads.reading.set(key, until);
  const reading: Promise<FirstRead<V>> = read()
    .then(
      (value): FirstRead<V> => {
        if (value === undefined) {
          ended(reads, key, { at: t.now(), outcome: "absent" });
          return { kind: "absent" };
        }
        held.put(key, value, at);
        ended(reads, key, { at: t.now(), outcome: "value" });
        return { kind: "value", value: held.entry(key)?.value ?? value };
      },
      (error: unknown): FirstRead<V> => {
        ended(reads, key, { at: t.now(), outcome: "failed", error });
        // the key stays claimed for a pause: a store that fails at once is read once per pause, not by
        // every waiting opening in turn
        if (reads.reading.get(key) === until) reads.reading.set(key, t.now() + RETRY_PAUSE_MS);
        const entry = held.entry(key);
        return entry && t.now() - entry.at <= RECENT_MS
          ? { kind: "value", value: entry.value }
          : { kind: "unavailable", error };
      },
    )
    .finally(() => {
      if (reads.reading.get(key) === until) reads.reading.delete(key);
    });
  const snapshot = held.entry(key);
  if (!snapshot || at - snapshot.at > RECENT_MS) return reading;
  const waited = await Promise.race([reading, t.sleep(STALE_WAIT_MS).then(() => null)]);
  return waited ?? { kind: "value", value: snapshot.value };
}
