import type { SQL, SQLWrapper } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type * as schema from "./schema";

/** A row as the driver parses it (the same parsing over HTTP and TCP, see below). */
export type Row = Record<string, unknown>;

/**
 * The database the engine uses, whichever driver is below it: drizzle's query builder over the
 * schema (`select`, `insert`, `update`, `delete`), plus two calls with one meaning on every driver.
 *
 * - `execute(sql…)` runs one statement and answers `{ rows }`;
 * - `transaction([sql…, sql…])` runs the statements in one transaction, in order, and answers each
 *   one's rows; when one fails, none of them took effect. (It replaces drizzle's interactive
 *   `transaction(callback)`, which Neon's HTTP driver does not have: one HTTP request per call.)
 *
 * Raw rows are parsed the way drizzle's Neon HTTP driver leaves them: int4 as numbers, int8 and
 * numeric as strings, timestamps, dates and intervals as Postgres text ("2030-01-02 03:04:05.678+00"),
 * json as values, arrays as arrays. (The query builder maps columns as the schema says: Dates.) Errors are the driver's; wrap
 * calls in `withDb` (src/db/client.ts), which turns integrity violations and data exceptions into a
 * `DatabaseRefusedError` (409 and 400 at the edge) and an unreachable database into a
 * `StoreUnavailableError` (503). The TCP adapter raises a `StoreUnavailableError` itself for
 * connection failures (a socket error code such as EPIPE would otherwise pass for a SQLSTATE).
 *
 * @example
 * const { rows } = await withDb(() => db.execute<{ id: string }>(sql`select id from sales`));
 * const [sales, , live] = await withDb(() => db.transaction([sql`update …`, sql`insert …`, sql`update …`]));
 */
export type SqlStore = Omit<PgDatabase<PgQueryResultHKT, typeof schema>, "execute" | "transaction"> & {
  execute<T extends Row = Row>(query: SQLWrapper): Promise<{ rows: T[] }>;
  transaction(statements: SQL[]): Promise<Row[][]>;
};
