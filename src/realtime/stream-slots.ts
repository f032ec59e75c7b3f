import { createLeases, type Lease } from "../memory/leases";

/**
 * How long a stream that stopped ticking still holds its slot: workerd drops the context of a request
 * whose client left without running its `finally`, so a slot is freed by going stale (a live stream
 * ticks every ≤ 500 ms, or waits ≤ 4 s on a blocked write before it drops itself).
 */
const SLOT_STALE_MS = 6_000;
const slots = createLeases(SLOT_STALE_MS);

/**
 * A slot for one more stream in this isolate or process, or null when `max` streams are open (the route
 * answers 503 with Retry-After; the page polls meanwhile). The stream touches its slot on every tick and
 * releases it when it ends.
 */
export function takeStreamSlot(max: number, now: number): Lease | null {
  if (slots.count(now) >= max) return null;
  return slots.take("stream", now);
}

/** Streams open in this isolate or process. */
export function openStreams(now: number): number {
  return slots.count(now);
}
