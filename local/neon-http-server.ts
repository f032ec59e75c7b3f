/**
 * A local stand-in for Neon's SQL-over-HTTP endpoint, as `@neondatabase/serverless` 1.2 `neon()` and
 * drizzle `neon-http` use it (read from the driver's `execute`/`processQueryResult`):
 *
 * - `POST` JSON `{"query","params"}` → `{"command","rowCount","fields":[{"name","dataTypeID",…}],"rows"}`;
 *   `{"queries":[…]}` → `{"results":[…]}`, run in one transaction on one connection (BEGIN … COMMIT,
 *   ROLLBACK on error) honouring `Neon-Batch-Isolation-Level`, `-Read-Only` and `-Deferrable`;
 * - rows are arrays of Postgres text (or null) with `Neon-Array-Mode: true` + `Neon-Raw-Text-Output: true`
 *   (what the driver always sends; it parses the text itself); objects keyed by column otherwise;
 * - each query is one extended-protocol statement, as on Neon (no multi-statement strings);
 * - a Postgres error → 400 `{"message","code","detail",…}`, so the driver throws `NeonDbError` with the
 *   SQLSTATE (a wrong parameter count too: 08P01); Postgres down → 503 at once (connection refused);
 * - `rowCount` is the command tag's count, null when the tag has none (CREATE, SET, SHOW);
 * - as Neon's proxy does (neondatabase/neon `proxy/src/serverless/sql_over_http.rs`): a client that goes
 *   away has its query cancelled and its connection discarded, and a single query that leaves its
 *   connection inside a transaction (`BEGIN`) gets the connection discarded, never reused;
 * - up to `maxConnections` (default 20) per user and database; more requests queue for up to
 *   `timeoutMs` (default 30 s), as behind Neon's PgBouncer, instead of failing.
 *
 * The target is pinned: user, password and database come from the `Neon-Connection-String` header, but
 * host and port are always those of `databaseUrl`, so this is not an open relay.
 * The worker points the driver here with `neonConfig.fetchEndpoint = () => env.NEON_HTTP_ENDPOINT`.
 *
 * @example
 * const neonHttp = await startNeonHttpServer({ port: 0, databaseUrl: pg.databaseUrl });
 * neonConfig.fetchEndpoint = () => neonHttp.url;
 * const sql = neon(pg.databaseUrl);
 */
import { createServer, type IncomingMessage } from "node:http";
import pg from "pg";
import { closeServer, errorMessage, header, listen, readBody, sendJson } from "./http-util";
import { LOOPBACK } from "./ports";

export type NeonHttpServerOptions = {
  /** 0 or absent: a free port. */
  port?: number;
  /** The Postgres every query goes to (its host and port are the only target). */
  databaseUrl: string;
  /** How long a request may wait to connect or for a free connection before answering 503. Default 30 s. */
  timeoutMs?: number;
  /** Connections per user and database. Default 20. */
  maxConnections?: number;
};

export type NeonHttpServer = { url: string; port: number; close(): Promise<void> };

type Query = { query: string; params: unknown[] };
type Reply = { status: number; body: unknown };

const ERROR_FIELDS = (
  "severity code detail hint position internalPosition internalQuery where schema table column dataType " +
  "constraint file line routine"
).split(" ");
const ISOLATION: Record<string, string> = {
  ReadUncommitted: "READ UNCOMMITTED",
  ReadCommitted: "READ COMMITTED",
  RepeatableRead: "REPEATABLE READ",
  Serializable: "SERIALIZABLE",
};
const rawText = { getTypeParser: () => (value: string) => value };

/** Starts the endpoint; resolves once it listens (Postgres may still be starting). */
export async function startNeonHttpServer(options: NeonHttpServerOptions): Promise<NeonHttpServer> {
  const target = new URL(options.databaseUrl);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const pools = new Map<string, pg.Pool>();

  const poolFor = (connectionString: string): pg.Pool => {
    const given = new URL(connectionString || options.databaseUrl);
    const user = decodeURIComponent(given.username || target.username);
    const password = decodeURIComponent(given.password || target.password);
    const database = decodeURIComponent(given.pathname.slice(1) || target.pathname.slice(1));
    const key = JSON.stringify([user, password, database]);
    let pool = pools.get(key);
    if (!pool) {
      const host = target.hostname;
      const port = Number(target.port || 5432);
      pool = new pg.Pool({
        host,
        port,
        user,
        password,
        database,
        max: options.maxConnections ?? 20,
        connectionTimeoutMillis: timeoutMs,
      });
      pool.on("error", () => undefined);
      pools.set(key, pool);
    }
    return pool;
  };

  const handle = async (req: IncomingMessage, gone: AbortSignal): Promise<Reply> => {
    if (req.method !== "POST") return { status: 405, body: { message: "only POST is supported" } };
    let body: { query?: unknown; params?: unknown; queries?: unknown };
    try {
      body = JSON.parse((await readBody(req)).toString("utf8"));
    } catch {
      return { status: 400, body: { message: "request body is not valid JSON" } };
    }
    const arrayMode = header(req, "neon-array-mode") === "true";
    const rawTextOutput = header(req, "neon-raw-text-output") === "true";
    let pool: pg.Pool;
    try {
      pool = poolFor(header(req, "neon-connection-string"));
    } catch {
      return { status: 400, body: { message: "invalid Neon-Connection-String" } };
    }
    const queries = Array.isArray(body.queries) ? body.queries.map(toQuery) : [toQuery(body)];
    if (queries.some((q) => q === null))
      return { status: 400, body: { message: "expected {query, params}" } };
    const valid = queries as Query[];
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      return failure(error);
    }
    // The client went away: cancel what runs (pg_cancel_backend) and never reuse the connection.
    let discard = false;
    const cancel = () => {
      discard = true;
      void cancelBackend(pool, client);
    };
    gone.addEventListener("abort", cancel, { once: true });
    if (gone.aborted) cancel();
    try {
      const exec = async (q: Query) => format(await runQuery(client, q, rawTextOutput), arrayMode);
      if (!Array.isArray(body.queries)) return { status: 200, body: await exec(valid[0] as Query) };
      await client.query(begin(req));
      try {
        const results = [];
        for (const q of valid) results.push(await exec(q));
        await client.query("COMMIT");
        return { status: 200, body: { results } };
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      }
    } catch (error) {
      if (!(error instanceof pg.DatabaseError) || isConnectivity(error)) discard = true;
      return failure(error);
    } finally {
      gone.removeEventListener("abort", cancel);
      // A connection left inside a transaction (a lone BEGIN) is closed, which rolls it back.
      if (client.getTransactionStatus() !== "I") discard = true;
      client.release(discard);
    }
  };

  const server = createServer((req, res) => {
    const gone = new AbortController();
    res.once("close", () => res.writableEnded || gone.abort());
    handle(req, gone.signal)
      .catch((error: unknown) => failure(error))
      .then((reply) => sendJson(res, reply.status, reply.body));
  });
  const port = await listen(server, options.port);
  return {
    url: `http://${LOOPBACK}:${port}/sql`,
    port,
    async close() {
      await closeServer(server);
      await Promise.all([...pools.values()].map((p) => p.end().catch(() => undefined)));
    },
  };
}

function toQuery(value: unknown): Query | null {
  if (typeof value !== "object" || value === null) return null;
  const { query, params } = value as { query?: unknown; params?: unknown };
  if (typeof query !== "string") return null;
  return { query, params: Array.isArray(params) ? params : [] };
}

function runQuery(client: pg.PoolClient, q: Query, rawTextOutput: boolean): Promise<pg.QueryArrayResult> {
  const config: pg.QueryArrayConfig & { queryMode: "extended" } = {
    text: q.query,
    values: q.params,
    rowMode: "array",
    queryMode: "extended",
    ...(rawTextOutput ? { types: rawText } : {}),
  };
  return client.query(config);
}

function format(result: pg.QueryArrayResult, arrayMode: boolean) {
  const fields = result.fields.map((f) => ({
    name: f.name,
    dataTypeID: f.dataTypeID,
    tableID: f.tableID,
    columnID: f.columnID,
    dataTypeSize: f.dataTypeSize,
    dataTypeModifier: f.dataTypeModifier,
    format: f.format,
  }));
  const rows = arrayMode
    ? result.rows
    : result.rows.map((row) => Object.fromEntries(fields.map((f, i) => [f.name, row[i]])));
  return { command: result.command, rowCount: result.rowCount, fields, rows, rowAsArray: arrayMode };
}

function begin(req: IncomingMessage): string {
  const isolation = ISOLATION[header(req, "neon-batch-isolation-level")];
  const readOnly = header(req, "neon-batch-read-only");
  const deferrable = header(req, "neon-batch-deferrable");
  return [
    "BEGIN",
    isolation ? `ISOLATION LEVEL ${isolation}` : "",
    readOnly === "true" ? "READ ONLY" : readOnly === "false" ? "READ WRITE" : "",
    deferrable === "true" ? "DEFERRABLE" : deferrable === "false" ? "NOT DEFERRABLE" : "",
  ]
    .filter(Boolean)
    .join(" ");
}

/** Connection loss, shutdown and overload: the database is unavailable, not the query wrong. */
function isConnectivity(error: pg.DatabaseError): boolean {
  // 08P01 (protocol violation) is the request's fault, e.g. a wrong number of parameters.
  return /^(08|53|57P)/.test(error.code ?? "") && error.code !== "08P01";
}

/** Asks Postgres to cancel whatever `client` runs, over a connection of its own (best effort). */
async function cancelBackend(pool: pg.Pool, client: pg.PoolClient): Promise<void> {
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

function failure(error: unknown): Reply {
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
