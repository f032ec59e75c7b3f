import restoreStockLua from "../../lua/restore-stock.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf, type ScriptReply } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const restoreStockScript = defineScript(
  "restore-stock",
  restoreStockLua,
  "525ff0ce5b0f362fb38d30a4b5dad6d870fe1272",
);

export type RestoreOutcome =
  | { kind: "restored"; remaining: number }
  | { kind: "already_restored"; remaining: number }
  | { kind: "not_initialised" }
  | { kind: "not_reserved"; remaining: number };

const CODES = ["OK", "ALREADY_FINAL", "NOT_INITIALISED", "NOT_RESERVED"] as const;

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
  const k = saleKeys(order.saleId);
  const reply = await withRedis(() =>
    runScript<ScriptReply>(
      redis,
      restoreStockScript,
      [k.meta, k.stock, k.holdings, k.ledger, k.orders, k.outbox],
      [now, order.orderId, order.userId, order.quantity, reason],
    ),
  );
  const remaining = Number(reply[1]);
  switch (codeOf("restore-stock", reply, CODES)) {
    case "OK":
      return { kind: "restored", remaining };
    case "ALREADY_FINAL":
      return { kind: "already_restored", remaining };
    case "NOT_INITIALISED":
      return { kind: "not_initialised" };
    case "NOT_RESERVED":
      return { kind: "not_reserved", remaining };
  }
}
