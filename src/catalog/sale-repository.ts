import { eq, sql } from "drizzle-orm";
import { type Db, withDb } from "../db/client";
import { sales, stockAdjustments } from "../db/schema";
import type { SaleRecord } from "./sale-record";

type SaleRow = typeof sales.$inferSelect;

/** Inserts a sale; returns false if a sale with that product token already exists. */
export async function insertSale(db: Db, sale: Omit<SaleRecord, "remaining">): Promise<boolean> {
  const rows = await withDb(() =>
    db
      .insert(sales)
      .values({
        id: sale.saleId,
        productId: sale.productId,
        name: sale.name,
        priceCents: sale.priceCents,
        initialStock: sale.initialStock,
        perUserLimit: sale.perUserLimit,
        startsAt: new Date(sale.startsAt),
        endsAt: new Date(sale.endsAt),
        paymentWindowSeconds: Math.round(sale.paymentWindowMs / 1000),
        productToken: sale.productToken,
        admission: sale.admission ?? "open",
        proofOfWork: sale.proofOfWork ?? false,
      })
      .onConflictDoNothing()
      .returning({ id: sales.id }),
  );
  return rows.length === 1;
}

export async function findSaleByToken(db: Db, token: string): Promise<SaleRow | null> {
  const rows = await withDb(() => db.select().from(sales).where(eq(sales.productToken, token)).limit(1));
  return rows[0] ?? null;
}

export async function setSalePausedInDb(db: Db, saleId: string, paused: boolean): Promise<void> {
  await withDb(() => db.update(sales).set({ paused }).where(eq(sales.id, saleId)));
}

export type RecordOutcome =
  | { kind: "recorded" }
  | { kind: "already_recorded"; delta: number }
  | { kind: "stale_epoch" };

/**
 * Records an operator adjustment once (by its id) and adds it to the sale's total, only while the sale
 * is still in `epoch`, the Redis generation the adjustment was applied in. The sale row is locked
 * first, so a rebuild (which moves the epoch on in the same row) either reads the total with this
 * adjustment in it or makes this a `stale_epoch` no-op (the rebuild replaces the Redis state that had it).
 */
export async function recordAdjustment(
  db: Db,
  saleId: string,
  adjustment: { id: string; delta: number; epoch: number },
): Promise<RecordOutcome> {
  const result = await withDb(() =>
    db.execute<{ in_epoch: number; inserted: number; existing: number | null }>(sql`
      with in_epoch as (
        select id from ${sales} where id = ${saleId} and epoch = ${adjustment.epoch} for update
      ), ins as (
        insert into ${stockAdjustments} (id, sale_id, delta)
        select ${adjustment.id}, ${saleId}, ${adjustment.delta} from in_epoch
        on conflict (id) do nothing returning delta
      ), upd as (
        update ${sales} set stock_adjustments = stock_adjustments + (select delta from ins)
        where id = ${saleId} and epoch = ${adjustment.epoch} and exists (select 1 from ins) returning id
      )
      select (select count(*) from in_epoch)::int as in_epoch, (select count(*) from upd)::int as inserted,
             (select delta from ${stockAdjustments} where id = ${adjustment.id}) as existing`),
  );
  const row = result.rows[0];
  if (row?.existing !== null && row?.existing !== undefined)
    return { kind: "already_recorded", delta: Number(row.existing) };
  if (Number(row?.inserted) === 1) return { kind: "recorded" };
  if (Number(row?.in_epoch) === 0) return { kind: "stale_epoch" };
  // recorded by a concurrent request after this statement's snapshot
  return { kind: "already_recorded", delta: (await findAdjustment(db, adjustment.id)) ?? adjustment.delta };
}

/** The delta of an adjustment Postgres has recorded, or null. */
export async function findAdjustment(db: Db, adjustmentId: string): Promise<number | null> {
  const result = await withDb(() =>
    db.execute<{ delta: number }>(sql`select delta from ${stockAdjustments} where id = ${adjustmentId}`),
  );
  const row = result.rows[0];
  return row ? Number(row.delta) : null;
}

/** An adjustment applied in Redis, as its ledger entry says (AdjustmentEntry, src/stock/ledger-entry.ts). */
export type AppliedAdjustment = { id: string; delta: number; epoch: number };

/**
 * Records in Postgres the adjustments Redis applied but Postgres does not have (the request failed
 * between the two stores and was not retried); those of an older epoch are skipped, since the rebuild
 * that ended it replaced the Redis state that held them. Returns the ids recorded.
 */
export async function recordAppliedAdjustments(
  deps: { db: Db },
  saleId: string,
  applied: AppliedAdjustment[],
): Promise<string[]> {
  const recorded: string[] = [];
  for (const adjustment of applied) {
    const outcome = await recordAdjustment(deps.db, saleId, adjustment);
    if (outcome.kind === "recorded") recorded.push(adjustment.id);
  }
  return recorded;
}
