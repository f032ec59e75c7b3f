import type { SQL, SQLWrapper } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import { PgDialect } from "drizzle-orm/pg-core";
import pg from "pg";
import * as schema from "../db/schema";
import type { Row, SqlStore } from "../db/sql-store";
import { StoreUnavailableError } from "../errors";
import { retireIdleOnConnectionFailure } from "./idle-clients";
import { sqlSpan } from "./sql-spans";

/** A {@link SqlStore} that holds a pool of connections: close it when the process stops. */
export type PostgresTcpStore = SqlStore & { close(): Promise<void> };

export type PostgresTcpOptions = {
  /** Connections in the pool. Default 10. */
  max?: number;
  /** Give up waiting for a connection (new or from the pool) after this. Default 2,000. */
  connectTimeoutMs?: number;
  /**
   * A statement not answered within this fails (503) and its connection is discarded: on a silent
   * (half-open) connection no answer and no reset ever come. Default 5,000.
   */
  queryTimeoutMs?: number;
};

const dialect = new PgDialect();

/**
 * Dates, times and intervals (and arrays of them) stay Postgres text, as drizzle's Neon HTTP driver
 * leaves them (it sets the Neon driver's parsers so, process-wide); everything else parses as usual.
 */
const RAW_TYPES = new Set([1082, 1083, 1114, 1184, 1186, 1182, 1115, 1185, 1187, 1231]);
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    RAW_TYPES.has(oid)
      ? (value: string) => value
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Errors from the server carry a SQLSTATE (`withDb` classifies them); anything else is the connection. */
function classify(error: unknown): never {
  if (error instanceof pg.DatabaseError) throw error;
  throw new StoreUnavailableError("postgres", error);
}

function toQuery(statement: SQLWrapper): pg.QueryConfig {
  const query = dialect.sqlToQuery(statement.getSQL());
  return { text: query.sql, values: query.params };
}

/**
 * A {@link SqlStore} over a pool of TCP connections (node-postgres), for Node, Deno and Bun servers;
 * `postgres://…?sslmode=require` for Neon or any TLS server. Raw statements (`execute`, `transaction`)
 * go to the pool directly, parsed as drizzle's Neon HTTP driver parses them (dates as text); the query
 * builder runs through drizzle's node-postgres driver on the same pool.
 *
 * @example
 * const db = connectPostgresTcp(process.env.DATABASE_URL);
 * await withDb(() => db.execute(sql`select 1`));
 * await db.close();
 */
export function connectPostgresTcp(databaseUrl: string, options: PostgresTcpOptions = {}): PostgresTcpStore {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2_000,
    query_timeout: options.queryTimeoutMs ?? 5_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    idleTimeoutMillis: 30_000,
    types,
  });
  // An idle connection that breaks (a restart, a failover) is dropped by the pool; without a listener
  // the error would end the process.
  pool.on("error", (error) => console.warn("postgres:", error.message));
  // A client in use (inside a transaction, between two statements) that loses its connection emits the
  // error itself, where the pool does not listen: the statement it runs, or the next, fails with it.
  pool.on("connect", (client) => client.on("error", () => undefined));
  retireIdleOnConnectionFailure(pool);
  const db = drizzle({ client: pool, schema });
  return Object.assign(db, {
    execute: <T extends Row>(query: SQLWrapper) =>
      sqlSpan([query], async () => {
        const result = await pool.query(toQuery(query)).catch(classify);
        return { rows: result.rows as T[] };
      }),
    transaction: (statements: SQL[]) => sqlSpan(statements, () => runTransaction(pool, statements)),
    close: () => pool.end(),
  }) satisfies PostgresTcpStore;
}

/** The statements in one transaction on one client of the pool, each one's rows; none when one fails. */
async function runTransaction(pool: pg.Pool, statements: SQL[]): Promise<Row[][]> {
  const client = await pool.connect().catch(classify);
  let broken: Error | undefined;
  try {
    await client.query("begin");
    const results: Row[][] = [];
    for (const statement of statements) results.push((await client.query(toQuery(statement))).rows);
    await client.query("commit");
    return results;
  } catch (error) {
    if (!(error instanceof pg.DatabaseError)) broken = error as Error;
    else
      await client.query("rollback").catch((e: Error) => {
        broken = e;
      });
    return classify(error);
  } finally {
    client.release(broken);
  }
}
