const RECHECK_LEASE_MS = 250;
const soldOutUntil = new Map<string, number>();

/**
 * The isolate's memory of sales it saw sold out (seed 001's local stock, made safe): while set, buy
 * attempts for the sale are answered 410 without any Redis command. It expires after `ttlMs`, so units
 * that come back (expired or cancelled orders, an operator adding stock) are sold again. When it
 * expires, one request goes to Redis to look again while the others keep the 410 for a short lease:
 * a crowd does not turn into a burst of scripts every time the memory runs out.
 */
export const soldOutCache = {
  mark(saleId: string, now: number, ttlMs: number): void {
    if (ttlMs > 0) soldOutUntil.set(saleId, now + ttlMs);
  },
  has(saleId: string, now: number): boolean {
    const until = soldOutUntil.get(saleId);
    if (until === undefined) return false;
    if (until > now) return true;
    soldOutUntil.set(saleId, now + RECHECK_LEASE_MS);
    return false;
  },
  clear(saleId?: string): void {
    if (saleId === undefined) soldOutUntil.clear();
    else soldOutUntil.delete(saleId);
  },
};
