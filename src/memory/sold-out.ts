const RECHECK_LEASE_MS = 250;
const MAX_KEYS_PER_SALE = 10_000;
const pair = (userId: string, key: string) => JSON.stringify([userId, key]);

/**
 * The isolate's memory of sales it saw sold out (seed 001's local stock, made safe): while set, buy
 * attempts for the sale are answered 410 without any Redis command. It expires after `ttlMs`, so units
 * that come back (expired or cancelled orders, an operator adding stock) are sold again. When it
 * expires, one request goes to Redis to look again while the others keep the 410 for a short lease:
 * a crowd does not turn into a burst of scripts every time the memory runs out.
 *
 * A request with an Idempotency-Key must get its key's first answer back, and that answer may be a
 * 202 given by another isolate (whose reply never reached the shopper): a key this isolate has not
 * seen answered 410 always goes to Redis. A key it has seen answered 410 (its recorded first answer,
 * see reserve-stock.lua) is answered 410 from memory while the sale is known sold out, at the cost of
 * an unkeyed attempt: nothing.
 */
export function createSoldOutMemory() {
  const soldOutUntil = new Map<string, number>();
  /** Per sale: the (user, Idempotency-Key) pairs whose recorded first answer was 410, seen here. */
  const soldOutKeys = new Map<string, Set<string>>();
  return {
    mark(saleId: string, now: number, ttlMs: number): void {
      if (ttlMs > 0) soldOutUntil.set(saleId, now + ttlMs);
    },
    /**
     * Whether the sale is known sold out at `now`, for an attempt without a key, changing nothing: an
     * expired memory is left for {@link has} to lease its recheck (src/buy/refusal-from-memory.ts).
     */
    knows(saleId: string, now: number): boolean {
      return (soldOutUntil.get(saleId) ?? 0) > now;
    },
    /** Whether to answer 410 at once; `key` is the attempt's (user id, Idempotency-Key), if it has one. */
    has(saleId: string, now: number, key?: { userId: string; idempotencyKey: string }): boolean {
      const until = soldOutUntil.get(saleId);
      if (until === undefined) return false;
      if (key && !soldOutKeys.get(saleId)?.has(pair(key.userId, key.idempotencyKey))) return false;
      if (until > now) return true;
      soldOutUntil.set(saleId, now + RECHECK_LEASE_MS);
      soldOutKeys.delete(saleId);
      return false;
    },
    /** Records that Redis answered this key 410 (a first answer, or its replay). */
    rememberKey(saleId: string, userId: string, idempotencyKey: string): void {
      let keys = soldOutKeys.get(saleId);
      if (!keys) {
        keys = new Set();
        soldOutKeys.set(saleId, keys);
      }
      if (keys.size >= MAX_KEYS_PER_SALE) keys.delete(keys.values().next().value as string);
      keys.add(pair(userId, idempotencyKey));
    },
    clear(saleId?: string): void {
      if (saleId === undefined) {
        soldOutUntil.clear();
        soldOutKeys.clear();
      } else {
        soldOutUntil.delete(saleId);
        soldOutKeys.delete(saleId);
      }
    },
  };
}

export type SoldOutMemory = ReturnType<typeof createSoldOutMemory>;
