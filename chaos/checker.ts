/**
 * The history-based checker: judges one sale's settled state in Redis and Postgres (read directly, see
 * observe.ts) against what clients were told (history.ts). It asserts the contract's invariant:
 *
 * - units in live orders never exceed the stock (`oversold`), and
 *   remaining + units in live orders = initial stock + adjustments (`balance`);
 * - every acknowledged reservation (202) has exactly one order, same user and quantity (`lost`);
 * - no order exists that no acknowledged or unknown buy explains, and one Idempotency-Key never holds
 *   two orders (`duplicate`); a refused buy reserved nothing (`phantom`);
 * - no user holds more than the limit in live orders nor in either store's holdings (Redis, Postgres),
 *   and both stores agree on holdings (`limit`);
 * - no order is both paid and restored (`paid-restored`); every expired or cancelled order's units came
 *   back exactly once: restored_at, one `restored` event, one ledger "x:" entry (`restore`);
 * - every acknowledged pay ends paid, every acknowledged cancel ends cancelled, every 409 names the
 *   state the order really ended in (`answer`);
 * - an unknown buy has exactly one order or none (`unknown`); every ledger reservation has its order
 *   (`ledger`); nothing is left queued or unexpired past the contract's bounds (`unsettled`).
 *
 * @example
 * const result = await checkSale({ redis, db }, saleId, history.toJSON());
 * printCheck(result);
 * if (result.violations.length) process.exitCode = 1;
 */
import type { Redis } from "ioredis";
import type pg from "pg";
import { checkAnswers, checkBuys } from "./buy-rules";
import type { CheckFigures, CheckOptions, CheckResult, Judging, Rule, Violation } from "./check-types";
import type { Op } from "./history";
import { type Observed, observe } from "./observe";
import {
  checkBalance,
  checkLedger,
  checkLimits,
  checkRestores,
  checkSaleRows,
  checkUnsettled,
} from "./store-rules";

export type { CheckFigures, CheckOptions, CheckResult, Rule, Violation };

export async function checkSale(
  stores: { redis: Redis; db: pg.Pool },
  saleId: string,
  ops: Op[],
  options: CheckOptions = {},
): Promise<CheckResult> {
  return judge(await observe(stores, saleId, ops), ops, options);
}

/** The rules, on an observation already taken (pure: unit-testable on hand-made states). */
export function judge(state: Observed, ops: Op[], options: CheckOptions = {}): CheckResult {
  const v: Violation[] = [];
  const figures = emptyFigures(ops);
  figures.deadLetters = state.deadLetters;
  const j: Judging = {
    state,
    options,
    figures,
    add: (rule, detail, ids = {}) => v.push({ rule, detail, ...ids }),
  };
  const stock = checkSaleRows(j);
  const live = checkBalance(j, stock);
  checkLimits(j, live);
  checkRestores(j);
  checkLedger(j);
  checkUnsettled(j);
  if (!options.stateOnly) {
    checkBuys(
      j,
      ops.filter((op) => op.kind === "buy"),
    );
    checkAnswers(state.orders, ops, j.add);
  }
  return { saleId: state.saleId, violations: v, figures, ok: v.length === 0 };
}

function emptyFigures(ops: Op[]): CheckFigures {
  const buys = { ok: 0, failed: 0, unknown: 0 };
  for (const op of ops) if (op.kind === "buy") buys[op.outcome ?? "unknown"]++;
  return {
    operations: ops.length,
    buys,
    acknowledged: 0,
    acknowledgedUnits: 0,
    unknownBuys: 0,
    unknownThatReserved: 0,
    lost: 0,
    oversold: 0,
    duplicates: 0,
    stock: 0,
    remaining: 0,
    liveUnits: 0,
    orders: { queued: 0, awaiting_payment: 0, paid: 0, expired: 0, cancelled: 0 },
    deadLetters: 0,
  };
}

/** Prints what the checker found: the figures, then every violation (the first 25 of each rule). */
export function printCheck(result: CheckResult, log: (line: string) => void = console.log): void {
  const f = result.figures;
  log(
    `sale ${result.saleId}: ${f.operations} operations; buys ${f.buys.ok} ok / ${f.buys.failed} refused / ${f.buys.unknown} unknown; ` +
      `${f.acknowledged} acknowledged (${f.acknowledgedUnits} units); stock ${f.stock}, remaining ${f.remaining}, live units ${f.liveUnits}; ` +
      `orders ${Object.entries(f.orders)
        .map(([s, n]) => `${s} ${n}`)
        .join(", ")}`,
  );
  if (result.ok) {
    log("  invariant holds: no violations");
    return;
  }
  const shown = new Map<Rule, number>();
  for (const x of result.violations) {
    const n = (shown.get(x.rule) ?? 0) + 1;
    shown.set(x.rule, n);
    if (n <= 25)
      log(
        `  VIOLATION ${x.rule}: ${x.detail}${x.orderId ? ` [order ${x.orderId}]` : ""}${x.userId ? ` [user ${x.userId}]` : ""}`,
      );
  }
  for (const [rule, n] of shown) if (n > 25) log(`  … ${n - 25} more ${rule} violations`);
}
