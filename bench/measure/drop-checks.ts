/**
 * The drop crowd's checks (bench/phases/drop-crowd.ts), per variant, from three sources that do not share
 * code with the engine's own bookkeeping: the carts the crowd sent and the 202 answers it got, the order
 * rows in Postgres, and the drop's `stock`/`vstock` keys read straight from redis-server; and the operator's
 * stats next to them.
 */
import type { Redis } from "ioredis";
import { saleKeys } from "../../src/stock/keys";
import type { SaleStats } from "../clients/admin";
import type { CartLine } from "../clients/drop-carts";
import type { Check } from "./measures";
import type { PgStats } from "./pg-stats";

type Row = { id: string; user_id: string; quantity: number; status: string; items: CartLine[] };

/** One variant's figures at a checkpoint. */
export type VariantFigures = {
  variantId: string;
  stock: number;
  /** `vstock` in redis-server */
  redisRemaining: number;
  /** units in awaiting_payment and paid orders in Postgres */
  liveUnits: number;
  /** the operator's stats for the variant */
  stats: { remaining: number; liveUnits: number; pendingRestoreUnits: number };
};

export type DropInput = {
  saleId: string;
  variants: string[];
  units: number;
  perUserLimit: number;
  carts: CartLine[][];
  /** the order ids the crowd was answered with, and the attempt behind each */
  orderIds: string[];
  orderAttempts: number[];
};

const key = (lines: CartLine[]) =>
  lines
    .map((l) => `${l.variantId}×${l.quantity}`)
    .sort()
    .join(",");

/** Postgres's live units per variant and per shopper, and the orders whose lines are not their cart's. */
async function readOrders(pg: PgStats, d: DropInput) {
  const rows = await pg.query<Row>(
    "select id, user_id, quantity, status, items from orders where sale_id = $1",
    [d.saleId],
  );
  const asked = new Map(d.orderIds.map((id, i) => [id, d.carts[d.orderAttempts[i] as number] ?? []]));
  const live = new Map<string, number>();
  const perUser = new Map<string, number>();
  const partial: string[] = [];
  const unknown: string[] = [];
  for (const row of rows) {
    const cart = asked.get(row.id);
    if (!cart) unknown.push(row.id);
    else if (key(row.items) !== key(cart) || row.quantity !== cart.reduce((n, l) => n + l.quantity, 0))
      partial.push(`${row.id}: asked ${key(cart)}, has ${key(row.items)}`);
    if (row.status !== "awaiting_payment" && row.status !== "paid") continue;
    perUser.set(row.user_id, (perUser.get(row.user_id) ?? 0) + row.quantity);
    for (const l of row.items) live.set(l.variantId, (live.get(l.variantId) ?? 0) + l.quantity);
  }
  const byStatus: Record<string, number> = {};
  for (const row of rows) byStatus[row.status] = (byStatus[row.status] ?? 0) + 1;
  return { rows, live, perUser, partial, unknown, byStatus };
}

/**
 * Reads Redis, Postgres, then Redis again, until both Redis readings agree and the operator sees nothing
 * being given back (an expiry between the reads moves a unit between the sources): at most `tries` times.
 */
async function settledReading(pg: PgStats, redis: Redis, stats: () => Promise<SaleStats>, d: DropInput) {
  const k = saleKeys(d.saleId);
  const vstock = async () => ({ v: await redis.hgetall(k.variantStock), total: await redis.get(k.stock) });
  for (let attempt = 1; ; attempt++) {
    const before = await vstock();
    const orders = await readOrders(pg, d);
    const sale = await stats();
    const after = await vstock();
    const settled = JSON.stringify(before) === JSON.stringify(after) && sale.pendingRestoreUnits === 0;
    if (settled || attempt >= 10) return { redis: after, orders, sale, settled };
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Every check of one checkpoint (`when`: "after the cancellations", "after the drain"), and the figures. */
export async function dropChecks(
  when: string,
  sources: { pg: PgStats; redis: Redis; stats: () => Promise<SaleStats> },
  d: DropInput,
): Promise<{ checks: Check[]; variants: VariantFigures[]; byStatus: Record<string, number> }> {
  const { redis, orders, sale, settled } = await settledReading(sources.pg, sources.redis, sources.stats, d);
  const checks: Check[] = [];
  const check = (name: string, ok: boolean, detail: string) =>
    checks.push({ name: `${when}: ${name}`, ok, detail });
  const variants: VariantFigures[] = d.variants.map((variantId) => {
    const s = sale.variants.find((v) => v.variantId === variantId);
    return {
      variantId,
      stock: d.units,
      redisRemaining: Number(redis.v[variantId] ?? Number.NaN),
      liveUnits: orders.live.get(variantId) ?? 0,
      stats: {
        remaining: s?.remaining ?? Number.NaN,
        liveUnits: s?.liveUnits ?? Number.NaN,
        pendingRestoreUnits: s?.pendingRestoreUnits ?? Number.NaN,
      },
    };
  });
  const list = (xs: string[]) => (xs.length ? xs.slice(0, 3).join("; ") : "none");
  const oversold = variants.filter((v) => v.liveUnits > v.stock || !(v.redisRemaining >= 0));
  check(
    "0 oversold per variant",
    oversold.length === 0,
    variants.map((v) => `${v.variantId} ${v.liveUnits}/${v.stock}`).join(" "),
  );
  const over = [...orders.perUser].filter(([, units]) => units > d.perUserLimit);
  check(
    "no shopper over the limit across variants",
    over.length === 0 && sale.usersOverLimit === 0,
    `${over.length} in Postgres over ${d.perUserLimit} (${list(over.map(([u, n]) => `${u} ${n}`))}), ${sale.usersOverLimit} in the stats`,
  );
  check(
    "every order's lines are its cart's, all or nothing",
    orders.partial.length === 0 && orders.unknown.length === 0 && orders.rows.length === d.orderIds.length,
    `${orders.rows.length} orders in Postgres, ${d.orderIds.length} answered 202; ${orders.partial.length} differ from their cart (${list(orders.partial)}), ${orders.unknown.length} never answered`,
  );
  const unequal = variants.filter((v) => v.redisRemaining !== v.stock - v.liveUnits);
  const liveTotal = variants.reduce((n, v) => n + v.liveUnits, 0);
  check(
    "every expired or cancelled line back once: remaining = stock − live units, per variant",
    settled && unequal.length === 0 && Number(redis.total) === d.units * d.variants.length - liveTotal,
    `${settled ? "" : "no settled reading; "}${unequal.length} variants differ (${list(unequal.map((v) => `${v.variantId}: Redis ${v.redisRemaining}, stock − live ${v.stock - v.liveUnits}`))}); drop total ${redis.total}, stock − live ${d.units * d.variants.length - liveTotal}`,
  );
  const breaks = variants.filter(
    (v) => v.stats.remaining + v.stats.liveUnits + v.stats.pendingRestoreUnits !== v.stock,
  );
  check(
    "operator stats: the invariant per variant (invariantHolds)",
    sale.invariantHolds && breaks.length === 0,
    `invariantHolds ${sale.invariantHolds}, ${breaks.length} variants break it${sale.invariantBreaks.length ? `: ${sale.invariantBreaks.join("; ")}` : ""}`,
  );
  return { checks, variants, byStatus: orders.byStatus };
}
