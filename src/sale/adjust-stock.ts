import type { Redis } from "@upstash/redis/cloudflare";
import { withRedis } from "../redis";
import { saleKeys } from "./keys";
import { runScript, type ScriptReply } from "./scripts";

export type AdjustOutcome =
  | { kind: "adjusted" | "already_applied"; remaining: number; stock: number }
  | { kind: "below_reserved"; remaining: number; stock: number }
  | { kind: "not_initialised" };

/** Adds (or removes) units while the sale runs, never below what is reserved (adjust-stock.lua). */
export async function adjustStock(
  redis: Redis,
  saleId: string,
  adjustmentId: string,
  delta: number,
  now: number,
): Promise<AdjustOutcome> {
  const keys = saleKeys(saleId);
  const [code, remaining, stock] = await withRedis(() =>
    runScript<ScriptReply>(
      redis,
      "adjustStock",
      [keys.meta, keys.stock, keys.ledger],
      [now, adjustmentId, delta],
    ),
  );
  const figures = { remaining: Number(remaining), stock: Number(stock) };
  switch (Number(code)) {
    case 1:
      return { kind: "adjusted", ...figures };
    case 2:
      return { kind: "already_applied", ...figures };
    case 3:
      return { kind: "below_reserved", ...figures };
    case 4:
      return { kind: "not_initialised" };
    default:
      throw new Error(`adjust-stock returned an unknown code: ${String(code)}`);
  }
}
