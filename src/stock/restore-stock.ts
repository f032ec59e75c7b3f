import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { saleKeys } from "./keys";
import { runScript, type ScriptReply } from "./script";

export type RestoreOutcome =
  | { kind: "restored"; remaining: number }
  | { kind: "already_restored"; remaining: number }
  | { kind: "not_initialised" }
  | { kind: "not_reserved"; remaining: number };

/**
 * Gives an expired or cancelled order's units back to the stock and the user's allowance, exactly once
 * per order id (restore-stock.lua).
 */
export async function restoreStock(
  redis: Redis,
  order: { saleId: string; orderId: string; userId: string; quantity: number },
  reason: string,
  now: number,
): Promise<RestoreOutcome> {
  const keys = saleKeys(order.saleId);
  const [code, remaining] = await withRedis(() =>
    runScript<ScriptReply>(
      redis,
      "restoreStock",
      [keys.meta, keys.stock, keys.holdings, keys.ledger, keys.orders, keys.outbox],
      [now, order.orderId, order.userId, order.quantity, reason],
    ),
  );
  switch (Number(code)) {
    case 1:
      return { kind: "restored", remaining: Number(remaining) };
    case 2:
      return { kind: "already_restored", remaining: Number(remaining) };
    case 3:
      return { kind: "not_initialised" };
    case 4:
      return { kind: "not_reserved", remaining: Number(remaining) };
    default:
      throw new Error(`restore-stock returned an unknown code: ${String(code)}`);
  }
}
