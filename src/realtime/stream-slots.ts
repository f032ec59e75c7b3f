import type { Lease, Leases } from "../memory/leases";

/**
 * A slot for one more stream in this isolate or process (`streams`, its memory's open streams), or null
 * when `max` streams are open (the route answers 503 with Retry-After; the page polls meanwhile). The
 * stream touches its slot on every tick and releases it when it ends.
 */
export function takeStreamSlot(streams: Leases, max: number, now: number): Lease | null {
  if (streams.count(now) >= max) return null;
  return streams.take("stream", now);
}
