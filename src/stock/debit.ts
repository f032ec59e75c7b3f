import debitStockLua from "../../lua/debit-stock.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf, type ScriptReply } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const debitStockScript = defineScript(
  "debit-stock",
  debitStockLua,
  "96a920a9866bb745584ae95f072c167bbb03419d",
);

export type DebitOutcome = { kind: "ok"; remaining: number; debited: number } | { kind: "not_ready" };

const CODES = ["OK", "NOT_INITIALISED", "OTHER_EPOCH"] as const;

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
  const k = saleKeys(saleId);
  const reply = await withRedis(() =>
    runScript<ScriptReply>(
      redis,
      debitStockScript,
      [k.meta, k.stock, k.holdings, k.ledger],
      [now, epoch, ...orders.flatMap((o) => [o.orderId, o.userId, o.quantity])],
    ),
  );
  switch (codeOf("debit-stock", reply, CODES)) {
    case "OK":
      return { kind: "ok", remaining: Number(reply[1]), debited: Number(reply[2]) };
    case "NOT_INITIALISED":
    case "OTHER_EPOCH":
      return { kind: "not_ready" };
  }
}
