import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { saleKeys } from "./keys";
import { runScript, type ScriptReply } from "./script";

type Figures = { remaining: number; stock: number };

/** What adjust-stock.lua did; `epoch` is the Redis generation the adjustment was applied in. */
export type AdjustOutcome =
  | ({ kind: "adjusted" | "already_applied"; epoch: number } & Figures)
  | ({ kind: "id_reused"; appliedDelta: number } & Figures)
  | ({ kind: "below_reserved" } & Figures)
  | { kind: "not_initialised" };

/** Adds (or removes) units while the sale runs, once per adjustment id, never below what is reserved. */
export async function adjustStock(
  redis: Redis,
  saleId: string,
  adjustmentId: string,
  delta: number,
  now: number,
): Promise<AdjustOutcome> {
  const keys = saleKeys(saleId);
  const [code, remaining, stock, epoch, applied] = await withRedis(() =>
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
      return { kind: "adjusted", epoch: Number(epoch), ...figures };
    case 2:
      return { kind: "already_applied", epoch: Number(epoch), ...figures };
    case 3:
      return { kind: "below_reserved", ...figures };
    case 4:
      return { kind: "not_initialised" };
    case 5:
      return { kind: "id_reused", appliedDelta: Number(applied), ...figures };
    default:
      throw new Error(`adjust-stock returned an unknown code: ${String(code)}`);
  }
}
