import { saleKeys } from "../stock/keys";
import { parseQueuedOrder, type QueuedOrder } from "../stock/queued-order";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";

/** The queued order document the reservation script wrote, or null once the pipeline took over. */
export async function readQueuedOrder(
  redis: Redis,
  saleId: string,
  orderId: string,
): Promise<QueuedOrder | null> {
  const json = await withRedis(() => redis.hget<string>(saleKeys(saleId).orders, orderId));
  return parseQueuedOrder(saleId, json);
}

/**
 * Acknowledges outbox entries: the orders are in Postgres now, so Redis forgets their queued documents
 * (polling reads Postgres from here on) and the sweeper will not republish them. One pipeline, two
 * commands per sale in the batch.
 */
export async function ackQueuedOrders(
  redis: Redis,
  orders: { saleId: string; orderId: string }[],
): Promise<void> {
  const bySale = new Map<string, string[]>();
  for (const o of orders) bySale.set(o.saleId, [...(bySale.get(o.saleId) ?? []), o.orderId]);
  if (bySale.size === 0) return;
  const pipe = redis.pipeline();
  for (const [saleId, ids] of bySale) {
    const keys = saleKeys(saleId);
    pipe.hdel(keys.orders, ...ids).zrem(keys.outbox, ...ids);
  }
  await withRedis(() => pipe.exec());
}

/** Outbox entries reserved before `olderThan` (ms), oldest first. */
export async function readStaleOutbox(
  redis: Redis,
  saleId: string,
  olderThan: number,
  limit: number,
): Promise<QueuedOrder[]> {
  const keys = saleKeys(saleId);
  return withRedis(async () => {
    const ids = await redis.zrange<string[]>(keys.outbox, 0, olderThan, {
      byScore: true,
      offset: 0,
      count: limit,
    });
    if (ids.length === 0) return [];
    const docs = (await redis.hmget(keys.orders, ...ids)) as unknown as (string | null)[] | null;
    return ids
      .map((_, i) => parseQueuedOrder(saleId, docs?.[i] ?? null))
      .filter((o): o is QueuedOrder => o !== null);
  });
}
