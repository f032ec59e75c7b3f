import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { saleKeys } from "./keys";
import { runScript, type ScriptReply } from "./script";

export type DebitOutcome = { kind: "ok"; remaining: number; debited: number } | { kind: "not_ready" };

/**
 * Makes sure this Redis counts orders of one sale that reached Postgres (debit-stock.lua): a no-op for
 * orders whose reservation entry is there, a debit for those a lost or lagging Redis never saw.
 * `not_ready` means the sale's Redis state for `epoch` is not there (yet): try again.
 */
export async function debitStock(
  redis: Redis,
  saleId: string,
  orders: { orderId: string; userId: string; quantity: number }[],
  epoch: number,
  now: number,
): Promise<DebitOutcome> {
  const keys = saleKeys(saleId);
  const [code, remaining, debited] = await withRedis(() =>
    runScript<ScriptReply>(
      redis,
      "debitStock",
      [keys.meta, keys.stock, keys.holdings, keys.ledger],
      [now, epoch, ...orders.flatMap((o) => [o.orderId, o.userId, o.quantity])],
    ),
  );
  switch (Number(code)) {
    case 1:
      return { kind: "ok", remaining: Number(remaining), debited: Number(debited) };
    case 3:
    case 4:
      return { kind: "not_ready" };
    default:
      throw new Error(`debit-stock returned an unknown code: ${String(code)}`);
  }
}
