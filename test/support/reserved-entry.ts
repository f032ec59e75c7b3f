import { expect } from "vitest";
import { newOrderId } from "../../src/ids";
import { saleKeys } from "../../src/stock/keys";
import type { AppUnderTest } from "./app";
import { reserve } from "./lua";

/** A reservation made by the script (acknowledged, its write not yet delivered): its job body entry. */
export async function reservedEntry(
  app: Pick<AppUnderTest, "redis">,
  saleId: string,
  userId: string,
  quantity: number,
) {
  const orderId = newOrderId(saleId);
  const reply = await reserve(app.redis, saleId, { orderId, userId, quantity, now: Date.now() });
  expect(reply[0]).toBe(1);
  const doc = await app.redis.hget(saleKeys(saleId).orders, orderId);
  return { ...JSON.parse(String(doc)), saleId } as Record<string, unknown> & { orderId: string };
}
