/**
 * The checker's rules on the stores alone (no history needed): the sale's rows, the stock balance and
 * oversell, the per-user limit and both stores' holdings, restores, the ledger, and what is left unsettled.
 * Each adds its violations in the order the checker reports them.
 */
import { type Judging, LIVE } from "./check-types";

/** The sale in both stores; returns the stock (initial + adjustments). */
export function checkSaleRows({ state, add }: Judging): number {
  const { redis } = state;
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
  return stock;
}

/** Units in live orders per user: every live order (`all`), and those Postgres has (`db`). */
export type LiveUnits = { all: Map<string, number>; db: Map<string, number> };

/** remaining + live + unrestored = stock, and no oversell; counts the orders by status. */
export function checkBalance({ state, add, figures }: Judging, stock: number): LiveUnits {
  let liveUnits = 0;
  let pendingUnits = 0;
  const live: LiveUnits = { all: new Map(), db: new Map() };
  for (const o of state.orders.values()) {
    figures.orders[o.status]++;
    if (LIVE.has(o.status)) {
      liveUnits += o.quantity;
      live.all.set(o.userId, (live.all.get(o.userId) ?? 0) + o.quantity);
      if (o.status !== "queued") live.db.set(o.userId, (live.db.get(o.userId) ?? 0) + o.quantity);
    } else if (!o.restored) pendingUnits += o.quantity;
  }
  const remaining = state.redis.remaining ?? 0;
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
  return live;
}

/** The per-user limit, and the two stores' holdings against the orders. */
export function checkLimits({ state, add }: Judging, live: LiveUnits): void {
  const { redis } = state;
  const limit = state.sale?.perUserLimit ?? Number.POSITIVE_INFINITY;
  const users = new Set([
    ...live.all.keys(),
    ...Object.keys(redis.holdings),
    ...Object.keys(state.dbHoldings),
  ]);
  for (const u of users) {
    const units = live.all.get(u) ?? 0;
    if (units > limit) add("limit", `holds ${units} units in live orders, limit ${limit}`, { userId: u });
    // each store on its own: a late write after a Redis loss can take a holding over the limit there
    for (const [store, held] of [
      ["Redis", redis.holdings[u] ?? 0],
      ["Postgres", state.dbHoldings[u] ?? 0],
    ] as const)
      if (held > limit) add("limit", `${store} holds ${held} units, over the limit ${limit}`, { userId: u });
    if ((redis.holdings[u] ?? 0) !== units)
      add("limit", `Redis holdings ${redis.holdings[u] ?? 0} ≠ ${units} units in live orders`, { userId: u });
    if ((state.dbHoldings[u] ?? 0) !== (live.db.get(u) ?? 0))
      add("limit", `Postgres holdings ${state.dbHoldings[u] ?? 0} ≠ ${live.db.get(u) ?? 0} live units`, {
        userId: u,
      });
  }
}

/** Restores: exactly once, and never for a paid order; no ledger restore without its order. */
export function checkRestores({ state, options, add }: Judging): void {
  const { redis } = state;
  for (const o of state.orders.values()) {
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
    if (field.startsWith("x:") && !state.orders.has(id) && !tombstone)
      add("restore", "ledger restore for an order that does not exist", { orderId: id });
  }
}

/** The ledger's reservations against the orders, and every unwritten or unpaid order's reservation. */
export function checkLedger({ state, options, add }: Judging): void {
  const { redis, orders } = state;
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
}

/** Nothing left behind: no order still queued, none unpaid past its window and the grace. */
export function checkUnsettled({ state, options, add }: Judging): void {
  for (const o of state.orders.values()) {
    if (o.status === "queued") add("unsettled", "still queued: never written to Postgres", { orderId: o.id });
    if (o.status === "awaiting_payment" && o.overdueSeconds > (options.expiryGraceSeconds ?? 30))
      add("unsettled", `unpaid ${Math.round(o.overdueSeconds)} s after its window`, { orderId: o.id });
  }
}
