/**
 * A stream's event ids: they start above the clock and above the `Last-Event-ID` a reconnecting client
 * sends, whatever it sends, and increase by one per event, so a client's ids never go backwards. Ids
 * are plain numbers while they stay well inside the safe-integer range (the usual case: the clock in ms);
 * a client's id past that (1e15, 2^53, 40 digits) is counted exactly with a bigint.
 *
 * @example
 * const next = eventIdCounter(firstEventId(request.headers.get("Last-Event-ID") ?? undefined, Date.now()));
 * write(`id: ${next()}\n`);
 */
export type EventId = number | bigint;

/** Ids below this are numbers: room for 2^40 events before the safe-integer limit. */
const NUMBER_LIMIT = BigInt(Number.MAX_SAFE_INTEGER - 2 ** 40);

/**
 * The id a client's `Last-Event-ID` stands for: a decimal integer of any length exactly; any other
 * text a JavaScript number reads as finite and not negative, rounded up past the double's error; null
 * for anything else (no number, so no order to keep).
 */
export function parseLastEventId(text: string | undefined): bigint | null {
  const trimmed = text?.trim() ?? "";
  if (trimmed === "") return null;
  if (/^\d+$/.test(trimmed)) return BigInt(trimmed);
  const value = Number(trimmed);
  if (!Number.isFinite(value) || value < 0) return null;
  // a double is within a relative 2^-52 of the decimal it was read from: step past that
  return BigInt(Math.ceil(value)) + BigInt(Math.ceil(value * 2 ** -52));
}

/** The id of a stream's first event: above the client's `Last-Event-ID`, and at least the clock. */
export function firstEventId(lastEventId: string | undefined, now: number): EventId {
  const last = parseLastEventId(lastEventId);
  if (last === null || last < BigInt(now)) return now;
  const next = last + 1n;
  return next < NUMBER_LIMIT ? Number(next) : next;
}

/** The ids of one stream from `first` on, one per call. */
export function eventIdCounter(first: EventId): () => EventId {
  if (typeof first === "number") {
    let n = first;
    return () => n++;
  }
  let b = first;
  return () => b++;
}
