import { sql } from "drizzle-orm";
import { withDb } from "../db/client";
import type { ReconcileDeps } from "../services";
import { saleKeys } from "../stock/keys";
import { type LedgerEntry, ledgerField, parseLedgerEntry } from "../stock/ledger-entry";
import { toRecord } from "../stores/redis-reply";
import { withRedis } from "../stores/with-redis";

/**
 * Where the incremental reconciliation of a sale stopped: its HSCAN cursor in the ledger ("0": a pass
 * starts) and the last order it checked, by (written_at, id).
 */
export type Watermark = { ledgerCursor: string; ordersAt: string; ordersId: string };

/** Nothing checked yet: the ledger's first chunk, the sale's first order. */
export const START: Watermark = { ledgerCursor: "0", ordersAt: "-infinity", ordersId: "" };

/**
 * Orders written this recently are left to the next run: a batch's statement can commit a moment after
 * the `written_at` it stamped, and the watermark must not pass an order not yet visible.
 */
const ORDERS_SETTLE_SECONDS = 5;

/** The sale's watermark (kept in Redis beside the ledger it walks; lost with it, a walk starts over). */
export async function readWatermark(deps: ReconcileDeps, saleId: string): Promise<Watermark> {
  const raw = toRecord(await withRedis(() => deps.redis.hgetall(saleKeys(saleId).reconcile))) ?? {};
  return {
    ledgerCursor: raw.ledgerCursor ?? START.ledgerCursor,
    ordersAt: raw.ordersAt ?? START.ordersAt,
    ordersId: raw.ordersId ?? START.ordersId,
  };
}

export async function saveWatermark(deps: ReconcileDeps, saleId: string, mark: Watermark): Promise<void> {
  await withRedis(() => deps.redis.hset(saleKeys(saleId).reconcile, mark));
}

/** A chunk of ledger entries (field and parsed entry) from `cursor`, and the cursor after it. */
export async function readLedgerChunk(
  deps: ReconcileDeps,
  saleId: string,
  from: string,
  size: number,
): Promise<{ entries: { field: string; entry: LedgerEntry }[]; read: number; cursor: string }> {
  const key = saleKeys(saleId).ledger;
  const entries: { field: string; entry: LedgerEntry }[] = [];
  let cursor = from;
  let read = 0;
  do {
    const [next, flat] = await withRedis(() => deps.redis.hscan(key, cursor, { count: size - read }));
    cursor = String(next);
    for (let i = 0; i + 1 < flat.length; i += 2) {
      read++;
      const entry = parseLedgerEntry(String(flat[i + 1]));
      if (entry) entries.push({ field: String(flat[i]), entry });
    }
  } while (cursor !== "0" && read < size);
  return { entries, read, cursor };
}

export type OrderReading = {
  id: string;
  user_id: string;
  quantity: number;
  status: string;
  restored_at: string | null;
  trimmable: boolean | string;
};

/** The orders of a chunk's reservations, by id (with whether each was written long enough ago to trim). */
export async function readOrdersById(deps: ReconcileDeps, ids: string[]): Promise<Map<string, OrderReading>> {
  if (ids.length === 0) return new Map();
  const result = await withDb(() =>
    deps.db.execute<OrderReading>(sql`
      select id, user_id, quantity, status, restored_at,
             written_at < now() - make_interval(secs => ${deps.config.LEDGER_TRIM_AFTER_SECONDS}) as trimmable
      from orders where id in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))`),
  );
  return new Map(result.rows.map((r) => [r.id, r]));
}

/** Which of the given adjustments Postgres has recorded. */
export async function readRecordedAdjustments(deps: ReconcileDeps, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const result = await withDb(() =>
    deps.db.execute<{ id: string }>(sql`
      select id from stock_adjustments
      where id in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))`),
  );
  return new Set(result.rows.map((r) => r.id));
}

/**
 * The next orders written after the watermark (settled a few seconds), at most `size`, and of those the
 * unpaid ones Redis holds no reservation for. Reads the sale's orders index from the watermark on.
 */
export async function checkOrdersChunk(
  deps: ReconcileDeps,
  saleId: string,
  mark: Watermark,
  size: number,
): Promise<{ checked: number; withoutReservation: string[]; mark: Watermark }> {
  const result = await withDb(() =>
    deps.db.execute<{ id: string; status: string; at: string }>(sql`
      select id, status, written_at::text as at from orders
      where sale_id = ${saleId} and (written_at, id) > (${mark.ordersAt}::timestamptz, ${mark.ordersId})
        and written_at < now() - make_interval(secs => ${ORDERS_SETTLE_SECONDS})
      order by written_at, id limit ${size}`),
  );
  const rows = result.rows;
  const last = rows.at(-1);
  const next = last ? { ...mark, ordersAt: last.at, ordersId: last.id } : mark;
  const unpaid = rows.filter((r) => r.status === "awaiting_payment").map((r) => r.id);
  if (unpaid.length === 0) return { checked: rows.length, withoutReservation: [], mark: next };
  const fields = unpaid.map((id) => ledgerField("reserve", id));
  const held = (await withRedis(() => deps.redis.hmget(saleKeys(saleId).ledger, ...fields))) as (
    | string
    | null
  )[];
  const withoutReservation = unpaid.filter((_, i) => held[i] === null || held[i] === undefined);
  return { checked: rows.length, withoutReservation, mark: next };
}
