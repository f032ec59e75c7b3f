import type { Redis } from "@upstash/redis/cloudflare";

const REFRESH_MS = 60_000;
type Offset = { ms: number; measuredAt: number };
let offset: Offset | null = null;
let measuring: Promise<Offset | null> | null = null;

/**
 * Measures how far the store's clock (Redis TIME) is from this isolate's, halving the round trip.
 * Returns null when Redis cannot be asked (the caller keeps the last offset, or none).
 */
async function measure(redis: Redis, localNow: () => number): Promise<Offset | null> {
  const sent = localNow();
  const reply = (await redis.time().catch(() => null)) as [number | string, number | string] | null;
  const received = localNow();
  if (!reply) return null;
  const storeMs = Number(reply[0]) * 1000 + Math.floor(Number(reply[1]) / 1000);
  return { ms: storeMs - (sent + received) / 2, measuredAt: received };
}

/**
 * "Now" by the store's clock, the one clock every isolate shares: the sale window is decided by it, so
 * a worker whose clock runs fast or slow cannot open or close a sale early. Lua scripts stay free of
 * clock reads: this value is what they get in ARGV. The offset is measured once per isolate (one TIME
 * call, awaited on the isolate's first buy) and refreshed every minute in the background.
 */
export async function storeNow(
  redis: Redis,
  defer: (p: Promise<unknown>) => void,
  localNow: () => number = Date.now,
): Promise<number> {
  const now = localNow();
  if (!offset) {
    measuring ??= measure(redis, localNow).finally(() => {
      measuring = null;
    });
    offset = (await measuring) ?? offset;
  } else if (now - offset.measuredAt > REFRESH_MS && !measuring) {
    measuring = measure(redis, localNow).finally(() => {
      measuring = null;
    });
    defer(measuring.then((next) => (offset = next ?? offset)));
  }
  return Math.round(now + (offset?.ms ?? 0));
}

/** Forgets the measured offset (tests). */
export function forgetStoreClock(): void {
  offset = null;
}
