import adjustStockLua from "../../lua/adjust-stock.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf, type ScriptReply } from "./codes";
import { saleKeys } from "./keys";
import { type AdjustmentEntry, ledgerField, parseLedgerEntry } from "./ledger-entry";
import { defineScript, runScript } from "./script";

export const adjustStockScript = defineScript(
  "adjust-stock",
  adjustStockLua,
  "5b91c85794ef5bc32352e343bf830df331b7cb48",
);

/** The sale's units after (or, when refused, as) the script found them; `variantRemaining` the variant's. */
type Figures = { remaining: number; stock: number; variantRemaining: number };

/** What adjust-stock.lua did; `epoch` is the Redis generation the adjustment was applied in. */
export type AdjustOutcome =
  | ({ kind: "adjusted" | "already_applied"; epoch: number } & Figures)
  /** `appliedVariant`: the variant the id adjusted ("" for a sale of one variant) */
  | ({ kind: "id_reused"; appliedDelta: number; appliedVariant: string } & Figures)
  | ({ kind: "below_reserved" } & Figures)
  | { kind: "not_initialised" };

const CODES = ["OK", "ALREADY_APPLIED", "BELOW_RESERVED", "NOT_INITIALISED", "ID_REUSED"] as const;

/** The adjustment: its id, its delta, and on a drop of several variants the variant it adjusts. */
export type AdjustRequest = { adjustmentId: string; delta: number; variantId?: string };

/**
 * Adds (or removes) units while the sale runs, once per adjustment id, never below what is reserved or
 * held by a queue or draw sale's admissions (`below_reserved`: `remaining` is then what may be removed).
 * With a `variantId` (a drop of several variants) the variant's units (`vstock`) and the sale's change
 * together, the variant never below what is reserved of it either.
 */
export async function adjustStock(
  redis: Redis,
  saleId: string,
  request: AdjustRequest,
  now: number,
): Promise<AdjustOutcome> {
  const k = saleKeys(saleId);
  const { adjustmentId, delta, variantId } = request;
  const keys = [k.meta, k.stock, k.ledger, k.room];
  const args: (string | number)[] = [now, adjustmentId, delta];
  if (variantId !== undefined) {
    keys.push(k.variantStock);
    args.push(variantId);
  }
  const reply = await withRedis(() => runScript<ScriptReply>(redis, adjustStockScript, keys, args));
  const [, remaining, stock, epoch, applied, variantRemaining, appliedVariant] = reply;
  const figures = {
    remaining: Number(remaining),
    stock: Number(stock),
    variantRemaining: Number(variantRemaining ?? remaining),
  };
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
      return {
        kind: "id_reused",
        appliedDelta: Number(applied),
        appliedVariant: String(appliedVariant ?? ""),
        ...figures,
      };
  }
}

/** The ledger entry of an adjustment, while Redis keeps it (a day after Postgres recorded it); else null. */
export async function readAdjustmentEntry(
  redis: Redis,
  saleId: string,
  adjustmentId: string,
): Promise<AdjustmentEntry | null> {
  const json = await withRedis(() =>
    redis.hget(saleKeys(saleId).ledger, ledgerField("adjust", adjustmentId)),
  );
  const entry = parseLedgerEntry(json as string | null);
  return entry?.type === "adjust" ? entry : null;
}
