import { and, eq, sql } from "drizzle-orm";
import { type Db, withDb } from "../db/client";
import { orders } from "../db/schema";

/**
 * Units of the sale in paid orders. Paid units only grow, so a reading is a floor of the truth at any
 * later moment: the room's cutoff computed from it is never too low (room-step.lua).
 */
export async function paidUnits(db: Db, saleId: string): Promise<number> {
  const rows = await withDb(() =>
    db
      .select({ units: sql<string>`coalesce(sum(${orders.quantity}), 0)` })
      .from(orders)
      .where(and(eq(orders.saleId, saleId), eq(orders.status, "paid"))),
  );
  return Number(rows[0]?.units ?? 0);
}
