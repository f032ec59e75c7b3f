import type { Redis } from "ioredis";
import { saleKeys } from "../../src/stock/keys";

/**
 * A live sale written straight into Redis for the benchmarks that call a script themselves (no engine):
 * open an hour around `now`, 10 units per shopper, a 10-minute payment window, and `stock` units.
 */
export async function seedScriptSale(
  redis: Redis,
  saleId: string,
  now: number,
  stock: number,
): Promise<void> {
  const k = saleKeys(saleId);
  await redis.hset(k.meta, {
    saleId,
    startsAt: now - 60_000,
    endsAt: now + 3_600_000,
    paused: "0",
    perUserLimit: 10,
    paymentWindowMs: 600_000,
    epoch: 1,
  });
  await redis.set(k.stock, stock);
}
