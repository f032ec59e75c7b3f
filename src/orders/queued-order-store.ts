import type { Redis } from "@upstash/redis/cloudflare";
import { withRedis } from "../redis";
import { saleKeys } from "../sale/keys";
import { parseQueuedOrder, type QueuedOrder } from "./order-view";

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
 * Acknowledges the outbox entry: the order is in Postgres now, so Redis forgets the queued document
 * (polling reads Postgres from here on) and the sweeper will not republish it.
 */
export async function ackQueuedOrder(redis: Redis, saleId: string, orderId: string): Promise<void> {
  const keys = saleKeys(saleId);
  await withRedis(() => redis.pipeline().hdel(keys.orders, orderId).zrem(keys.outbox, orderId).exec());
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
