import type { SQLWrapper } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { inSampledTrace, traced } from "../tracing";

const dialect = new PgDialect();

/**
 * A statement's kind for its span: its first word (`SELECT`, `INSERT`, `UPDATE`, `DELETE`), and for a
 * `WITH` statement the first change it makes (`WITH UPDATE`), else `WITH SELECT`. Never its values.
 */
export function statementKind(text: string): string {
  const first = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? "SQL";
  if (first !== "WITH") return first;
  const change = /\b(insert|update|delete)\b/i.exec(text)?.[1]?.toUpperCase();
  return `WITH ${change ?? "SELECT"}`;
}

/**
 * `work` (one statement, or a transaction of several) in a span `postgres <kind>` in a sampled trace;
 * the statement is read for its kind only then.
 */
export function sqlSpan<T>(statements: SQLWrapper[], work: () => Promise<T>): Promise<T> {
  if (!inSampledTrace()) return work();
  const kinds = statements.map((s) => statementKind(dialect.sqlToQuery(s.getSQL()).sql));
  const name = kinds.length === 1 ? `postgres ${kinds[0]}` : `postgres TRANSACTION (${kinds.length})`;
  return traced(
    name,
    {
      "db.system.name": "postgresql",
      "db.operation.name": kinds.length === 1 ? (kinds[0] ?? "SQL") : "TRANSACTION",
      "db.operation.batch.size": kinds.length,
    },
    work,
  );
}
