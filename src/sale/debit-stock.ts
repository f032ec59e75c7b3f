import type { Redis } from "@upstash/redis/cloudflare";
import { withRedis } from "../redis";
import { saleKeys } from "./keys";
import { runScript, type ScriptReply } from "./scripts";

export type DebitOutcome = { kind: "debited" | "already_counted"; remaining: number } | { kind: "not_ready" };

/**
 * Counts, in a rebuilt Redis, an order that reached Postgres after the rebuild (debit-stock.lua).
 * `not_ready` means the rebuild for `epoch` is not in Redis yet: try again.
 */
export async function debitStock(
  redis: Redis,
  order: { saleId: string; orderId: string; userId: string; quantity: number },
  epoch: number,
  now: number,
): Promise<DebitOutcome> {
  const keys = saleKeys(order.saleId);
  const [code, remaining] = await withRedis(() =>
    runScript<ScriptReply>(
      redis,
      "debitStock",
      [keys.meta, keys.stock, keys.holdings, keys.ledger],
      [now, order.orderId, order.userId, order.quantity, epoch],
    ),
  );
  switch (Number(code)) {
    case 1:
      return { kind: "debited", remaining: Number(remaining) };
    case 2:
      return { kind: "already_counted", remaining: Number(remaining) };
    case 3:
    case 4:
      return { kind: "not_ready" };
    default:
      throw new Error(`debit-stock returned an unknown code: ${String(code)}`);
  }
}
