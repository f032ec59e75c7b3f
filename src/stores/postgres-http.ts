import { neon, neonConfig } from "@neondatabase/serverless";
import type { SQL, SQLWrapper } from "drizzle-orm";
import { drizzle } from "drizzle-orm/neon-http";
import { PgDialect } from "drizzle-orm/pg-core";
import * as schema from "../db/schema";
import type { Row, SqlStore } from "../db/sql-store";
import { sqlSpan } from "./sql-spans";

const dialect = new PgDialect();

/**
 * A {@link SqlStore} over Neon's SQL-over-HTTP driver: one HTTP request per statement or transaction,
 * no connection to hold (Workers, Deno Deploy). `endpoint` points the driver elsewhere than Neon
 * (locally: local/neon-http-server.ts); it is process-wide in the driver, as in src/db/client.ts.
 *
 * @example
 * const db = connectPostgresHttp(env.DATABASE_URL, { endpoint: env.NEON_HTTP_ENDPOINT });
 */
export function connectPostgresHttp(databaseUrl: string, options: { endpoint?: string } = {}): SqlStore {
  const { endpoint } = options;
  if (endpoint) neonConfig.fetchEndpoint = () => endpoint;
  const client = neon(databaseUrl);
  const db = drizzle({ client, schema });
  const execute = db.execute.bind(db);
  return Object.assign(db, {
    execute: <T extends Row>(query: SQLWrapper) =>
      sqlSpan([query], () => execute<T>(query) as Promise<{ rows: T[] }>),
    transaction: (statements: SQL[]) =>
      sqlSpan(
        statements,
        () =>
          client.transaction(
            statements.map((statement) => {
              const query = dialect.sqlToQuery(statement);
              return client.query(query.sql, query.params);
            }),
          ) as Promise<Row[][]>,
      ),
  }) satisfies SqlStore;
}
