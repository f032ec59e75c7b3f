import type { Memory } from "../memory/memory";
import type { RedisStore as Redis } from "./redis-store";

const DEFAULT_REFRESH_MS = 60_000;
type Offset = { ms: number; measuredAt: number };

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
 * clock reads: this value is what they get in ARGV.
 *
 * No request waits on another request's I/O (workerd cancels such requests): until the isolate has an
 * offset, each request measures for itself (one TIME call) and the first finished measurement is kept;
 * once `refreshMs` old, the first request to notice refreshes it in its own `waitUntil` (`defer`) and
 * publishes the finished value, while the others go on with the offset they have.
 */
export async function storeNow(
  d: { redis: Redis; memory: Pick<Memory, "storeClock">; defer: (p: Promise<unknown>) => void },
  opts: { refreshMs?: number; localNow?: () => number } = {},
): Promise<number> {
  const localNow = opts.localNow ?? Date.now;
  const clock = d.memory.storeClock;
  const now = localNow();
  if (!clock.offset) {
    const measured = await measure(d.redis, localNow);
    clock.offset ??= measured;
    return Math.round(now + (clock.offset?.ms ?? 0));
  }
  if (now - clock.offset.measuredAt > (opts.refreshMs ?? DEFAULT_REFRESH_MS)) {
    clock.offset = { ...clock.offset, measuredAt: now };
    d.defer(
      measure(d.redis, localNow).then((next) => {
        if (next) clock.offset = next;
      }),
    );
  }
  return Math.round(now + clock.offset.ms);
}

/**
 * {@link storeNow} from the offset the process holds, or null when it has none or the offset is due for
 * its refresh (the caller then takes the path that calls {@link storeNow}).
 */
export function storeNowFromMemory(
  memory: Pick<Memory, "storeClock">,
  localNow: number,
  refreshMs = DEFAULT_REFRESH_MS,
): number | null {
  const offset = memory.storeClock.offset;
  if (!offset || localNow - offset.measuredAt > refreshMs) return null;
  return Math.round(localNow + offset.ms);
}
