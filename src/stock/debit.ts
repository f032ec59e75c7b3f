import debitStockLua from "../../lua/debit-stock.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf, type ScriptReply } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const debitStockScript = defineScript(
  "debit-stock",
  debitStockLua,
  "58fed469a6d7d32a3190f66a4b350a51975845ff",
);

export type DebitOutcome = { kind: "ok"; remaining: number; debited: number } | { kind: "not_ready" };

const CODES = ["OK", "NOT_INITIALISED", "OTHER_EPOCH"] as const;

/** An order to count: its lines (the queued document's) so that a drop counts each variant's units. */
export type DebitOrder = {
  orderId: string;
  userId: string;
  quantity: number;
  items?: readonly { variantId: string; quantity: number; priceCents?: number }[];
};

/**
 * Makes sure this Redis counts orders of one sale that reached Postgres (debit-stock.lua): a no-op for
 * orders whose reservation entry is there, a debit for those a lost or lagging Redis never saw (on a
 * drop of several variants, per line too). `not_ready` means the sale's Redis state for `epoch` is not
 * there (yet): try again.
 */
export async function debitStock(
  redis: Redis,
  saleId: string,
  orders: DebitOrder[],
  epoch: number,
  now: number,
): Promise<DebitOutcome> {
  const k = saleKeys(saleId);
  const lines = (o: DebitOrder) =>
    o.items && o.items.length > 0
      ? JSON.stringify(
          o.items.map((l) => ({
            variantId: l.variantId,
            quantity: l.quantity,
            priceCents: l.priceCents ?? 0,
          })),
        )
      : "";
  const reply = await withRedis(() =>
    runScript<ScriptReply>(
      redis,
      debitStockScript,
      [k.meta, k.stock, k.holdings, k.ledger, k.variantStock, k.variantHoldings],
      [now, epoch, ...orders.flatMap((o) => [o.orderId, o.userId, o.quantity, lines(o)])],
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
