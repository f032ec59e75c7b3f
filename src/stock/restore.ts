import restoreStockLua from "../../lua/restore-stock.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf, type ScriptReply } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const restoreStockScript = defineScript(
  "restore-stock",
  restoreStockLua,
  "5013871e57b77ae8de9552435ec917729692bef1",
);

export type RestoreOutcome =
  | { kind: "restored"; remaining: number }
  | { kind: "already_restored"; remaining: number }
  | { kind: "not_initialised" }
  | { kind: "not_reserved"; remaining: number };

const CODES = ["OK", "ALREADY_FINAL", "NOT_INITIALISED", "NOT_RESERVED"] as const;

/** An order's line as a restore needs it: which variant, how many units. */
export type RestoreLine = { variantId: string; quantity: number };

/** What a restore needs of an order; `items` its lines as Postgres holds them, when the caller has them. */
export type RestoreOrder = {
  saleId: string;
  orderId: string;
  userId: string;
  quantity: number;
  items?: readonly RestoreLine[];
};

/**
 * Gives an expired or cancelled order's units back to the stock and the user's allowance, exactly once
 * per order id (restore-stock.lua); on a drop of several variants, each line's units to its variant.
 * The lines are those the reservation entry recorded, else `order.items` (an entry a rebuild wrote
 * before variants has none): pass them whenever the order row is at hand.
 */
export async function restoreStock(
  redis: Redis,
  order: RestoreOrder,
  reason: string,
  now: number,
): Promise<RestoreOutcome> {
  const k = saleKeys(order.saleId);
  const lines = order.items ?? [];
  const reply = await withRedis(() =>
    runScript<ScriptReply>(
      redis,
      restoreStockScript,
      [k.meta, k.stock, k.holdings, k.ledger, k.orders, k.outbox, k.variantStock, k.variantHoldings],
      [
        now,
        order.orderId,
        order.userId,
        order.quantity,
        reason,
        lines.length,
        ...lines.flatMap((l) => [l.variantId, l.quantity]),
      ],
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
