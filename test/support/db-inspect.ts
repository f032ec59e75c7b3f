import type pg from "pg";

const TABLES = ["sales", "orders", "holdings", "order_events", "stock_adjustments", "dead_letters"];

/** Row counts of every table the worker writes: equal counts before and after mean nothing was written. */
export async function rowCounts(db: pg.Pool): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const t of TABLES)
    counts[t] = Number((await db.query(`select count(*)::int as n from ${t}`)).rows[0].n);
  return counts;
}

/**
 * Statements Postgres ran in this database so far, every client's (the engine's, through the Neon
 * stand-in or its pool), leaving out the readings of pg_stat_statements themselves: needs
 * `startApp({ statementStats: true })`. Two readings apart are the queries sent in between.
 */
export async function statementCalls(db: pg.Pool): Promise<number> {
  await db.query("create extension if not exists pg_stat_statements");
  const { rows } = await db.query<{ n: string }>(
    `select coalesce(sum(calls), 0)::text as n from pg_stat_statements
      where dbid = (select oid from pg_database where datname = current_database())
        and query not ilike '%pg_stat_statements%'`,
  );
  return Number(rows[0]?.n ?? 0);
}

/** Calls per statement text so far (see {@link statementCalls}): to name what a count holds. */
export async function statementsByQuery(db: pg.Pool): Promise<Record<string, number>> {
  const { rows } = await db.query<{ query: string; calls: string }>(
    `select query, calls::text as calls from pg_stat_statements
      where dbid = (select oid from pg_database where datname = current_database())
        and query not ilike '%pg_stat_statements%'`,
  );
  return Object.fromEntries(rows.map((r) => [r.query, Number(r.calls)]));
}
