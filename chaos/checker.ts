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
import type { Op } from "./history";
import { idemKey, type Observed, type OrderState, observe } from "./observe";

export type Rule =
  | "oversold"
  | "balance"
  | "lost"
  | "duplicate"
  | "phantom"
  | "limit"
  | "paid-restored"
  | "restore"
  | "answer"
  | "unknown"
  | "ledger"
  | "unsettled"
  | "sale"
  | "scenario";

export type Violation = { rule: Rule; detail: string; orderId?: string; userId?: string };

export type CheckFigures = {
  operations: number;
  buys: { ok: number; failed: number; unknown: number };
  acknowledged: number;
  acknowledgedUnits: number;
  unknownBuys: number;
  unknownThatReserved: number;
  lost: number;
  oversold: number;
  duplicates: number;
  stock: number;
  remaining: number;
  liveUnits: number;
  orders: Record<OrderState["status"], number>;
  deadLetters: number;
};

export type CheckResult = { saleId: string; violations: Violation[]; figures: CheckFigures; ok: boolean };

export type CheckOptions = {
  /** Redis was rebuilt from Postgres: idempotency answers and finished ledger entries may be gone. */
  redisRebuilt?: boolean;
  /** no history to judge against: check the stores only (every order counts as explained) */
  stateOnly?: boolean;
  /** how long past its window an unpaid order may stay unexpired (contract: 30 s on the local stack) */
  expiryGraceSeconds?: number;
};

const LIVE = new Set(["queued", "awaiting_payment", "paid"]);
const FINAL_FOR_CODE: Record<string, string> = {
  ORDER_PAID: "paid",
  ORDER_EXPIRED: "expired",
  ORDER_CANCELLED: "cancelled",
};

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
  const add = (rule: Rule, detail: string, ids: { orderId?: string; userId?: string } = {}) =>
    v.push({ rule, detail, ...ids });
  const { orders, redis } = state;
  const buys = ops.filter((op) => op.kind === "buy");
  const figures = emptyFigures(ops);
  figures.deadLetters = state.deadLetters;

  if (!state.sale) add("sale", "the sale has no Postgres row");
  const stock = (state.sale?.initialStock ?? 0) + (state.sale?.adjustments ?? 0);
  if (state.sale && state.sale.adjustments !== state.sale.adjustmentsRecorded)
    add(
      "sale",
      `sales.stock_adjustments ${state.sale.adjustments} ≠ sum of stock_adjustments ${state.sale.adjustmentsRecorded}`,
    );
  if (!redis.metaExists) add("sale", "the sale is missing from Redis");
  else if (redis.metaStock !== stock)
    add("balance", `Redis meta stock ${redis.metaStock} ≠ Postgres stock ${stock}`);

  // stock balance
  let liveUnits = 0;
  let pendingUnits = 0;
  const liveByUser = new Map<string, number>();
  const dbLiveByUser = new Map<string, number>();
  for (const o of orders.values()) {
    figures.orders[o.status]++;
    if (LIVE.has(o.status)) {
      liveUnits += o.quantity;
      liveByUser.set(o.userId, (liveByUser.get(o.userId) ?? 0) + o.quantity);
      if (o.status !== "queued") dbLiveByUser.set(o.userId, (dbLiveByUser.get(o.userId) ?? 0) + o.quantity);
    } else if (!o.restored) pendingUnits += o.quantity;
  }
  const remaining = redis.remaining ?? 0;
  figures.stock = stock;
  figures.remaining = remaining;
  figures.liveUnits = liveUnits;
  figures.oversold = Math.max(0, liveUnits - stock) + Math.max(0, -remaining);
  if (figures.oversold > 0)
    add("oversold", `${liveUnits} units in live orders, stock ${stock}, remaining ${remaining}`);
  if (remaining + liveUnits + pendingUnits !== stock)
    add(
      "balance",
      `remaining ${remaining} + live ${liveUnits} + unrestored ${pendingUnits} ≠ stock ${stock}`,
    );

  // per-user limit, and the two stores' holdings against the orders
  const limit = state.sale?.perUserLimit ?? Number.POSITIVE_INFINITY;
  const users = new Set([
    ...liveByUser.keys(),
    ...Object.keys(redis.holdings),
    ...Object.keys(state.dbHoldings),
  ]);
  for (const u of users) {
    const live = liveByUser.get(u) ?? 0;
    if (live > limit) add("limit", `holds ${live} units in live orders, limit ${limit}`, { userId: u });
    // each store on its own: a late write after a Redis loss can take a holding over the limit there
    for (const [store, held] of [
      ["Redis", redis.holdings[u] ?? 0],
      ["Postgres", state.dbHoldings[u] ?? 0],
    ] as const)
      if (held > limit) add("limit", `${store} holds ${held} units, over the limit ${limit}`, { userId: u });
    if ((redis.holdings[u] ?? 0) !== live)
      add("limit", `Redis holdings ${redis.holdings[u] ?? 0} ≠ ${live} units in live orders`, { userId: u });
    if ((state.dbHoldings[u] ?? 0) !== (dbLiveByUser.get(u) ?? 0))
      add("limit", `Postgres holdings ${state.dbHoldings[u] ?? 0} ≠ ${dbLiveByUser.get(u) ?? 0} live units`, {
        userId: u,
      });
  }

  // restores: exactly once, and never for a paid order
  for (const o of orders.values()) {
    const x = redis.ledger[`x:${o.id}`];
    const restoredEvents = o.events.restored ?? 0;
    if (o.status === "paid") {
      if (o.restored || restoredEvents > 0 || x || o.events.expired || o.events.cancelled)
        add("paid-restored", "paid and also expired, cancelled or restored", { orderId: o.id });
      continue;
    }
    if (o.status !== "expired" && o.status !== "cancelled") {
      if (x || o.restored) add("restore", `units restored while the order is ${o.status}`, { orderId: o.id });
      continue;
    }
    if (!o.restored) add("restore", `${o.status} but its units never came back`, { orderId: o.id });
    if (restoredEvents !== (o.restored ? 1 : 0))
      add("restore", `${restoredEvents} 'restored' events`, { orderId: o.id });
    if (o.restored && !x && redis.ledger[`r:${o.id}`] && !options.redisRebuilt)
      add("restore", "restored in Postgres but no ledger x: entry beside its reservation", { orderId: o.id });
  }
  for (const [field, entry] of Object.entries(redis.ledger)) {
    const id = field.slice(2);
    // a void's tombstone: an attempt answered 503 that never reserved (no order, by design)
    const tombstone = entry.reason === "void" && entry.counted === false && !redis.ledger[`r:${id}`];
    if (field.startsWith("x:") && !orders.has(id) && !tombstone)
      add("restore", "ledger restore for an order that does not exist", { orderId: id });
  }

  // the ledger's reservations against the orders
  for (const [field, entry] of Object.entries(redis.ledger)) {
    if (!field.startsWith("r:")) continue;
    const o = orders.get(field.slice(2));
    if (!o) add("ledger", "ledger reservation without an order", { orderId: field.slice(2) });
    else if (o.userId !== entry.userId || o.quantity !== Number(entry.quantity))
      add("ledger", `ledger says ${entry.userId}×${entry.quantity}, order says ${o.userId}×${o.quantity}`, {
        orderId: o.id,
      });
  }
  if (!options.redisRebuilt)
    for (const o of orders.values())
      if ((o.status === "awaiting_payment" || o.status === "queued") && !redis.ledger[`r:${o.id}`])
        add("ledger", `${o.status} order without a ledger reservation`, { orderId: o.id });

  // nothing left behind
  for (const o of orders.values()) {
    if (o.status === "queued") add("unsettled", "still queued: never written to Postgres", { orderId: o.id });
    if (o.status === "awaiting_payment" && o.overdueSeconds > (options.expiryGraceSeconds ?? 30))
      add("unsettled", `unpaid ${Math.round(o.overdueSeconds)} s after its window`, { orderId: o.id });
  }

  if (!options.stateOnly) {
    checkBuys(state, buys, options, add, figures);
    checkAnswers(orders, ops, add);
  }
  return { saleId: state.saleId, violations: v, figures, ok: v.length === 0 };
}

type Add = (rule: Rule, detail: string, ids?: { orderId?: string; userId?: string }) => void;

/** Acknowledged, refused and unknown buys against the orders that exist. */
function checkBuys(
  state: Observed,
  buys: Op[],
  options: CheckOptions,
  add: Add,
  figures: CheckFigures,
): void {
  const explained = new Map<string, Set<string>>();
  const slack = new Map<string, number>();
  const explain = (userId: string, orderId: string) => {
    const set = explained.get(userId) ?? new Set<string>();
    set.add(orderId);
    explained.set(userId, set);
  };
  const acked = new Map<string, Op>();
  const byKey = new Map<string, Set<string>>();
  for (const op of buys) {
    const answer = op.idempotencyKey
      ? state.redis.idempotency.get(idemKey(op.userId, op.idempotencyKey))
      : undefined;
    const reservedId = answer && Number(answer[0]) === 1 ? String(answer[1]) : undefined;
    if (op.outcome === "ok" && op.orderId) {
      acked.set(op.orderId, op);
      explain(op.userId, op.orderId);
    } else if (op.outcome === "unknown") {
      figures.unknownBuys++;
      if (reservedId) explain(op.userId, reservedId);
      else if (op.orderId) explain(op.userId, op.orderId);
      else if (!op.idempotencyKey || options.redisRebuilt)
        slack.set(op.userId, (slack.get(op.userId) ?? 0) + 1);
      if (reservedId || op.orderId) figures.unknownThatReserved++;
      if (reservedId && !state.orders.has(reservedId)) {
        figures.lost++;
        add("unknown", "an unknown buy reserved (its Idempotency-Key says so) but has no order", {
          orderId: reservedId,
          userId: op.userId,
        });
      }
    } else if (reservedId) {
      figures.duplicates++;
      add("phantom", `answered ${op.status} ${op.code ?? ""} yet its Idempotency-Key holds a reservation`, {
        orderId: reservedId,
        userId: op.userId,
      });
      explain(op.userId, reservedId);
    }
    if (op.idempotencyKey && op.orderId && op.outcome === "ok") {
      const k = idemKey(op.userId, op.idempotencyKey);
      const ids = byKey.get(k) ?? new Set<string>();
      ids.add(op.orderId);
      byKey.set(k, ids);
    }
  }
  for (const [k, ids] of byKey) {
    if (ids.size > 1) {
      figures.duplicates += ids.size - 1;
      add("duplicate", `one Idempotency-Key acknowledged ${ids.size} different orders`, {
        userId: k.split("\u0000")[0],
      });
    }
  }
  figures.acknowledged = acked.size;
  for (const [orderId, op] of acked) {
    figures.acknowledgedUnits += op.quantity ?? 0;
    const o = state.orders.get(orderId);
    if (!o) {
      figures.lost++;
      add("lost", "acknowledged (202) but no order exists", { orderId, userId: op.userId });
    } else if (o.userId !== op.userId || o.quantity !== op.quantity) {
      figures.lost++;
      add("lost", `acknowledged ${op.userId}×${op.quantity}, order is ${o.userId}×${o.quantity}`, {
        orderId,
      });
    }
  }
  const unexplained = new Map<string, string[]>();
  for (const o of state.orders.values()) {
    if (explained.get(o.userId)?.has(o.id)) continue;
    // a reservation voided after its attempt was answered 503 is recorded as a cancelled order
    if (o.status === "cancelled" && state.redis.ledger[`x:${o.id}`]?.reason === "void") continue;
    unexplained.set(o.userId, [...(unexplained.get(o.userId) ?? []), o.id]);
  }
  for (const [userId, ids] of unexplained) {
    const extra = ids.length - (slack.get(userId) ?? 0);
    if (extra > 0) {
      figures.duplicates += extra;
      add("duplicate", `${ids.length} order(s) no acknowledged or unknown buy explains: ${ids.join(", ")}`, {
        userId,
      });
    }
  }
}

/** Pay and cancel answers against the state each order ended in (final states never change). */
function checkAnswers(orders: Map<string, OrderState>, ops: Op[], add: Add): void {
  for (const op of ops) {
    if ((op.kind !== "pay" && op.kind !== "cancel") || !op.orderId) continue;
    const o = orders.get(op.orderId);
    const expected =
      op.outcome === "ok" ? (op.kind === "pay" ? "paid" : "cancelled") : FINAL_FOR_CODE[op.code ?? ""];
    if (!expected) continue;
    if (!o)
      add("answer", `${op.kind} answered ${op.status} for an order that does not exist`, {
        orderId: op.orderId,
      });
    else if (o.status !== expected)
      add(
        "answer",
        `${op.kind} answered ${op.status} ${op.code ?? op.orderStatus ?? ""}, order ended ${o.status}`,
        {
          orderId: op.orderId,
        },
      );
  }
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
