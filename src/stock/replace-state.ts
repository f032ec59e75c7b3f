import rebuildSaleLua from "../../lua/rebuild-sale.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf, type ScriptReply } from "./codes";
import { saleKeys } from "./keys";
import { parseLedgerEntry } from "./ledger-entry";
import { parseQueuedOrder, type QueuedOrder } from "./queued-order";
import { defineScript, runScript } from "./script";

export const rebuildSaleScript = defineScript(
  "rebuild-sale",
  rebuildSaleLua,
  "7d5b354404678b30b696c2bc526cd24f29974bac",
);

/** A sale's Redis state as computed from Postgres (see src/recovery/rebuild.ts). */
export type RebuiltState = {
  /** meta fields, `epoch` included */
  meta: Record<string, string>;
  remaining: number;
  holdings: Record<string, number>;
  /** reservation entries by ledger field, encoded */
  ledger: Record<string, string>;
  /** orders Postgres holds as final and this rebuild settled */
  settled: string[];
  /** the adjustment ids Postgres has recorded (the script keeps every other one the old state applied) */
  recordedAdjustments: string[];
  /** a drop of several variants: each variant's units left and its holdings ("<variantId>:<userId>") */
  variants?: VariantState;
};

/** A drop's per-variant state by Postgres: `remaining` by variant id, `holdings` by "<variantId>:<userId>". */
export type VariantState = { remaining: Record<string, number>; holdings: Record<string, number> };

/** A stock adjustment the old state applied that Postgres had not recorded, as the new ledger holds it. */
export type KeptAdjustment = { id: string; delta: number; epoch: number; variantId?: string };

/**
 * Replaces the sale's Redis state in one step (rebuild-sale.lua), per variant too for a drop of several
 * (`state.variants`). `rebuilt` with the queued orders the
 * old state held that Postgres had not counted and the adjustments it applied that Postgres had not
 * recorded (both kept and counted in the new state), or `stale` when a newer rebuild is already in place
 * (nothing changed).
 */
export async function replaceSaleState(
  redis: Redis,
  saleId: string,
  state: RebuiltState,
): Promise<{ kind: "rebuilt"; kept: QueuedOrder[]; keptAdjustments: KeptAdjustment[] } | { kind: "stale" }> {
  const k = saleKeys(saleId);
  const keys = [k.meta, k.stock, k.holdings, k.ledger, k.orders, k.outbox];
  const args: (string | number)[] = [
    JSON.stringify(state.meta),
    state.remaining,
    JSON.stringify(state.holdings),
    JSON.stringify(state.ledger),
    JSON.stringify(state.settled),
    JSON.stringify(state.recordedAdjustments),
  ];
  if (state.variants) {
    keys.push(k.variantStock, k.variantHoldings);
    args.push(JSON.stringify(state.variants.remaining), JSON.stringify(state.variants.holdings));
  }
  const reply = await withRedis(() => runScript<ScriptReply>(redis, rebuildSaleScript, keys, args));
  if (codeOf("rebuild-sale", reply, ["OK", "STALE"] as const) === "STALE") return { kind: "stale" };
  const kept: QueuedOrder[] = [];
  const keptAdjustments: KeptAdjustment[] = [];
  for (let i = 1; i + 1 < reply.length; i += 2) {
    // order ids never start with "a:": those fields are kept adjustments, with their new entry
    if (String(reply[i]).startsWith("a:")) {
      const entry = parseLedgerEntry(String(reply[i + 1]));
      if (entry?.type === "adjust")
        keptAdjustments.push({
          id: entry.adjustmentId,
          delta: entry.delta,
          epoch: entry.epoch ?? 1,
          ...(entry.variantId ? { variantId: entry.variantId } : {}),
        });
      continue;
    }
    const order = parseQueuedOrder(saleId, String(reply[i + 1]));
    if (order) kept.push(order);
  }
  return { kind: "rebuilt", kept, keptAdjustments };
}
