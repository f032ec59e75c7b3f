/**
 * One query of the local Neon HTTP stand-in, run and answered as Neon's proxy does
 * (neondatabase/neon `proxy/src/serverless/sql_over_http.rs`, `json.rs`):
 *
 * - one extended-protocol statement per query (no multi-statement strings), values as Postgres text;
 * - the answer `{"command","rowCount","rows","fields","rowAsArray"}`: `rowCount` the command tag's count
 *   (null when the tag has none: CREATE, SET, SHOW), `fields` with `format: "text"`, and the rows as
 *   arrays when the query's `arrayMode` says so (it wins over the `Neon-Array-Mode` header), else objects
 *   keyed by column name (a repeated name keeps its last value, as Neon's JSON does once parsed);
 * - a Postgres error → 400 `{"message","code","detail",…}`, so the driver throws `NeonDbError` with the
 *   SQLSTATE (a wrong parameter count too: 08P01); connectivity, shutdown and overload → 503.
 *
 * @example
 * const reply = await runQuery(client, { query: "SELECT 1 AS one", params: [], arrayMode: true });
 * // { command: "SELECT", rowCount: 1, rows: [["1"]], fields: [{ name: "one", … }], rowAsArray: true }
 */
import pg from "pg";
import { errorMessage } from "./http-util";

export type Query = { query: string; params: unknown[]; arrayMode: boolean };
export type Reply = { status: number; body: unknown };

const ERROR_FIELDS = (
  "severity code detail hint position internalPosition internalQuery where schema table column dataType " +
  "constraint file line routine"
).split(" ");
const rawText = { getTypeParser: () => (value: string) => value };

/** A body's query (`{query, params, arrayMode?}`), or null when it is not one. */
export function toQuery(value: unknown, defaultArrayMode: boolean): Query | null {
  if (typeof value !== "object" || value === null) return null;
  const { query, params, arrayMode } = value as { query?: unknown; params?: unknown; arrayMode?: unknown };
  if (typeof query !== "string") return null;
  return {
    query,
    params: Array.isArray(params) ? params : [],
    arrayMode: typeof arrayMode === "boolean" ? arrayMode : defaultArrayMode,
  };
}

/** Runs `q` on `client` and renders its result as Neon does. */
export async function runQuery(client: pg.PoolClient, q: Query) {
  const config: pg.QueryArrayConfig & { queryMode: "extended" } = {
    text: q.query,
    values: q.params,
    rowMode: "array",
    queryMode: "extended",
    types: rawText,
  };
  const result = await client.query(config);
  const fields = result.fields.map((f) => ({
    name: f.name,
    dataTypeID: f.dataTypeID,
    tableID: f.tableID,
    columnID: f.columnID,
    dataTypeSize: f.dataTypeSize,
    dataTypeModifier: f.dataTypeModifier,
    format: "text",
  }));
  const rows = q.arrayMode
    ? result.rows
    : result.rows.map((row) => Object.fromEntries(fields.map((f, i) => [f.name, row[i]])));
  return { command: result.command, rowCount: result.rowCount, rows, fields, rowAsArray: q.arrayMode };
}

/** Connection loss, shutdown and overload: the database is unavailable, not the query wrong. */
export function isConnectivity(error: pg.DatabaseError): boolean {
  // 08P01 (protocol violation) is the request's fault, e.g. a wrong number of parameters.
  return /^(08|53|57P)/.test(error.code ?? "") && error.code !== "08P01";
}

export function failure(error: unknown): Reply {
  if (error instanceof pg.DatabaseError && !isConnectivity(error)) {
    const fields = Object.fromEntries(
      ERROR_FIELDS.map((k) => [k, (error as unknown as Record<string, unknown>)[k]]).filter(
        ([, v]) => v !== undefined,
      ),
    );
    return { status: 400, body: { message: error.message, ...fields } };
  }
  const code = error instanceof pg.DatabaseError ? { code: error.code } : {};
  return { status: 503, body: { message: `database unavailable: ${errorMessage(error)}`, ...code } };
}

/** Asks Postgres to cancel whatever `client` runs, over a connection of its own (best effort). */
export async function cancelBackend(pool: pg.Pool, client: pg.PoolClient): Promise<void> {
  const pid = (client as unknown as { processID?: number }).processID;
  if (!pid) return;
  const { host, port, user, password, database } = pool.options;
  const killer = new pg.Client({ host, port, user, password, database, connectionTimeoutMillis: 2_000 });
  killer.on("error", () => undefined);
  try {
    await killer.connect();
    await killer.query("SELECT pg_cancel_backend($1)", [pid]);
  } catch {
    // the query may have ended, or Postgres be gone: nothing left to cancel
  } finally {
    await killer.end().catch(() => undefined);
  }
}
