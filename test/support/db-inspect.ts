import type pg from "pg";

const TABLES = ["sales", "orders", "holdings", "order_events", "stock_adjustments", "dead_letters"];

/** Row counts of every table the worker writes: equal counts before and after mean nothing was written. */
export async function rowCounts(db: pg.Pool): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const t of TABLES)
    counts[t] = Number((await db.query(`select count(*)::int as n from ${t}`)).rows[0].n);
  return counts;
}
