import adjustStockLua from "../../lua/adjust-stock.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf, type ScriptReply } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const adjustStockScript = defineScript(
  "adjust-stock",
  adjustStockLua,
  "e00cae0b2c973d8efef5d9825b99ae81f6d8e7a1",
);

type Figures = { remaining: number; stock: number };

/** What adjust-stock.lua did; `epoch` is the Redis generation the adjustment was applied in. */
export type AdjustOutcome =
  | ({ kind: "adjusted" | "already_applied"; epoch: number } & Figures)
  | ({ kind: "id_reused"; appliedDelta: number } & Figures)
  | ({ kind: "below_reserved" } & Figures)
  | { kind: "not_initialised" };

const CODES = ["OK", "ALREADY_APPLIED", "BELOW_RESERVED", "NOT_INITIALISED", "ID_REUSED"] as const;

/**
 * Adds (or removes) units while the sale runs, once per adjustment id, never below what is reserved or
 * held by a queue or draw sale's admissions (`below_reserved`: `remaining` is then what may be removed).
 */
export async function adjustStock(
  redis: Redis,
  saleId: string,
  adjustmentId: string,
  delta: number,
  now: number,
): Promise<AdjustOutcome> {
  const k = saleKeys(saleId);
  const reply = await withRedis(() =>
    runScript<ScriptReply>(
      redis,
      adjustStockScript,
      [k.meta, k.stock, k.ledger, k.room],
      [now, adjustmentId, delta],
    ),
  );
  const [, remaining, stock, epoch, applied] = reply;
  const figures = { remaining: Number(remaining), stock: Number(stock) };
  switch (codeOf("adjust-stock", reply, CODES)) {
    case "OK":
      return { kind: "adjusted", epoch: Number(epoch), ...figures };
    case "ALREADY_APPLIED":
      return { kind: "already_applied", epoch: Number(epoch), ...figures };
    case "BELOW_RESERVED":
      return { kind: "below_reserved", ...figures };
    case "NOT_INITIALISED":
      return { kind: "not_initialised" };
    case "ID_REUSED":
      return { kind: "id_reused", appliedDelta: Number(applied), ...figures };
  }
}
