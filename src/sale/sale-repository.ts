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

/** Records an operator adjustment once (by its id) and adds it to the sale's total. */
export async function recordAdjustment(
  db: Db,
  saleId: string,
  adjustmentId: string,
  delta: number,
): Promise<void> {
  await withDb(() =>
    db.execute(sql`
      with ins as (
        insert into ${stockAdjustments} (id, sale_id, delta) values (${adjustmentId}, ${saleId}, ${delta})
        on conflict (id) do nothing returning delta
      )
      update ${sales} set stock_adjustments = stock_adjustments + coalesce((select delta from ins), 0)
      where id = ${saleId}`),
  );
}
