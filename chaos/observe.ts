/**
 * Reads one sale's state straight from the stores, bypassing the worker: the Redis keys of
 * src/stock/keys.ts over a direct connection and the Postgres tables over a direct pool. The checker
 * judges this against the history.
 */
import type { Redis } from "ioredis";
import type pg from "pg";
import { saleKeys } from "../src/stock/keys";
import type { Op } from "./history";

export type LedgerEntry = {
  type?: string;
  orderId?: string;
  userId?: string;
  quantity?: number;
  delta?: number;
  /** restore entries: why ("void": a buy attempt the server gave up on, see void-reservation.lua) */
  reason?: string;
  /** restore entries: false when nothing was given back (a tombstone) */
  counted?: boolean;
};

export type OrderState = {
  id: string;
  userId: string;
  quantity: number;
  /** `queued` when only Redis has it */
  status: "queued" | "awaiting_payment" | "paid" | "expired" | "cancelled";
  restored: boolean;
  /** seconds since the window closed, by Postgres's clock (negative while it is open) */
  overdueSeconds: number;
  /** when the reservation was made (the `now` its buy attempt gave the script), once in Postgres */
  createdAtMs?: number;
  events: Record<string, number>;
};

export type Observed = {
  saleId: string;
  sale: {
    initialStock: number;
    adjustments: number;
    perUserLimit: number;
    adjustmentsRecorded: number;
  } | null;
  redis: {
    metaExists: boolean;
    metaStock: number;
    remaining: number | null;
    holdings: Record<string, number>;
    ledger: Record<string, LedgerEntry>;
    queued: Record<string, { userId: string; quantity: number }>;
    outbox: string[];
    /** first answers stored per "user\u0000key" for the keys the history used */
    idempotency: Map<string, unknown[] | null>;
  };
  orders: Map<string, OrderState>;
  dbHoldings: Record<string, number>;
  deadLetters: number;
};

export const idemKey = (userId: string, key: string) => `${userId}\u0000${key}`;

function parseJson<T>(text: string | null | undefined): T | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

async function readRedis(redis: Redis, saleId: string, ops: Op[]): Promise<Observed["redis"]> {
  const k = saleKeys(saleId);
  const [meta, remaining, holdings, ledger, queued, outbox] = await Promise.all([
    redis.hgetall(k.meta),
    redis.get(k.stock),
    redis.hgetall(k.holdings),
    redis.hgetall(k.ledger),
    redis.hgetall(k.orders),
    redis.zrange(k.outbox, "0", "-1"),
  ]);
  const keyed = [
    ...new Map(
      ops
        .filter((op) => op.kind === "buy" && op.idempotencyKey)
        .map((op) => [idemKey(op.userId, op.idempotencyKey as string), op] as const),
    ).values(),
  ];
  const idempotency = new Map<string, unknown[] | null>();
  const answers = keyed.length
    ? await redis.mget(...keyed.map((op) => k.idempotency(op.userId, op.idempotencyKey as string)))
    : [];
  keyed.forEach((op, i) => {
    idempotency.set(idemKey(op.userId, op.idempotencyKey as string), parseJson<unknown[]>(answers[i]));
  });
  const queuedDocs: Observed["redis"]["queued"] = {};
  for (const [id, json] of Object.entries(queued)) {
    const doc = parseJson<{ userId: string; quantity: number }>(json);
    if (doc) queuedDocs[id] = { userId: String(doc.userId), quantity: Number(doc.quantity) };
  }
  return {
    metaExists: Object.keys(meta).length > 0,
    metaStock: Number(meta.stock ?? Number.NaN),
    remaining: remaining === null ? null : Number(remaining),
    holdings: Object.fromEntries(Object.entries(holdings).map(([u, n]) => [u, Number(n)])),
    ledger: Object.fromEntries(Object.entries(ledger).map(([f, j]) => [f, parseJson<LedgerEntry>(j) ?? {}])),
    queued: queuedDocs,
    outbox,
    idempotency,
  };
}

async function readPostgres(db: pg.Pool, saleId: string) {
  const [sale, orders, events, holdings, adjustments, dead] = await Promise.all([
    db.query("select initial_stock, stock_adjustments, per_user_limit from sales where id = $1", [saleId]),
    db.query(
      `select id, user_id, quantity, status, restored_at is not null as restored,
              extract(epoch from now() - expires_at)::float as overdue,
              (extract(epoch from created_at) * 1000)::float8 as created_ms
       from orders where sale_id = $1`,
      [saleId],
    ),
    db.query(
      "select order_id, type, count(*)::int as n from order_events where sale_id = $1 group by order_id, type",
      [saleId],
    ),
    db.query("select user_id, units from holdings where sale_id = $1", [saleId]),
    db.query("select coalesce(sum(delta), 0)::int as total from stock_adjustments where sale_id = $1", [
      saleId,
    ]),
    db.query("select count(*)::int as n from dead_letters where body like $1", [`%${saleId}%`]),
  ]);
  return {
    sale: sale.rows[0],
    orders: orders.rows,
    events: events.rows,
    holdings: holdings.rows,
    adjustments,
    dead,
  };
}

/** One consistent-enough reading of a settled sale (nothing should be moving when it is taken). */
export async function observe(
  stores: { redis: Redis; db: pg.Pool },
  saleId: string,
  ops: Op[],
): Promise<Observed> {
  const redisSide = await readRedis(stores.redis, saleId, ops);
  const pgSide = await readPostgres(stores.db, saleId);
  const events = new Map<string, Record<string, number>>();
  for (const e of pgSide.events) {
    const byType = events.get(e.order_id) ?? {};
    byType[e.type] = Number(e.n);
    events.set(e.order_id, byType);
  }
  const orders = new Map<string, OrderState>();
  for (const r of pgSide.orders) {
    orders.set(r.id, {
      id: r.id,
      userId: r.user_id,
      quantity: Number(r.quantity),
      status: r.status,
      restored: Boolean(r.restored),
      overdueSeconds: Number(r.overdue),
      createdAtMs: Number(r.created_ms),
      events: events.get(r.id) ?? {},
    });
  }
  for (const [id, doc] of Object.entries(redisSide.queued)) {
    if (!orders.has(id))
      orders.set(id, { id, ...doc, status: "queued", restored: false, overdueSeconds: 0, events: {} });
  }
  const s = pgSide.sale;
  return {
    saleId,
    sale: s
      ? {
          initialStock: Number(s.initial_stock),
          adjustments: Number(s.stock_adjustments),
          perUserLimit: Number(s.per_user_limit),
          adjustmentsRecorded: Number(pgSide.adjustments.rows[0]?.total ?? 0),
        }
      : null,
    redis: redisSide,
    orders,
    dbHoldings: Object.fromEntries(pgSide.holdings.map((h) => [h.user_id as string, Number(h.units)])),
    deadLetters: Number(pgSide.dead.rows[0]?.n ?? 0),
  };
}
