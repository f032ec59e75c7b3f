/**
 * A local stand-in for Neon's SQL-over-HTTP endpoint, as `@neondatabase/serverless` 1.2 `neon()` and
 * drizzle `neon-http` use it (read from the driver's `execute`/`processQueryResult`), routed with Hono:
 *
 * - `POST /sql` JSON `{"query","params","arrayMode"?}` → one result (see `neon-query.ts`);
 *   `{"queries":[…]}` → `{"results":[…]}`, run in one transaction on one connection (BEGIN … COMMIT,
 *   ROLLBACK on error) honouring `Neon-Batch-Isolation-Level`, `-Read-Only` and `-Deferrable`;
 * - `Neon-Array-Mode: true`: rows as arrays (a query's own `arrayMode` wins), objects keyed by column
 *   otherwise; the driver always sends it with `Neon-Raw-Text-Output: true` and builds objects itself;
 * - values are Postgres text: typed JSON output (a request without `Neon-Raw-Text-Output: true`, which
 *   the driver never sends) is not implemented, refused with 501; other methods get 405, other paths 404;
 * - as Neon's proxy does (neondatabase/neon `proxy/src/serverless/sql_over_http.rs`): a client that goes
 *   away has its query cancelled and its connection discarded, and a single query that leaves its
 *   connection inside a transaction (`BEGIN`) gets the connection discarded, never reused;
 * - up to `maxConnections` (default 20) per user and database; more requests queue for up to
 *   `timeoutMs` (default 30 s), as behind Neon's PgBouncer, instead of failing. Postgres down → 503 at once.
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
import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import pg from "pg";
import { type OnNode, serveOnNode } from "./hono-on-node";
import { createPools } from "./neon-pools";
import {
  cancelBackend,
  failure,
  isConnectivity,
  type Query,
  type Reply,
  runQuery,
  toQuery,
} from "./neon-query";

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

const ISOLATION: Record<string, string> = {
  ReadUncommitted: "READ UNCOMMITTED",
  ReadCommitted: "READ COMMITTED",
  RepeatableRead: "REPEATABLE READ",
  Serializable: "SERIALIZABLE",
};

/** Starts the endpoint; resolves once it listens (Postgres may still be starting). */
export async function startNeonHttpServer(options: NeonHttpServerOptions): Promise<NeonHttpServer> {
  const pools = createPools({
    databaseUrl: options.databaseUrl,
    max: options.maxConnections ?? 20,
    timeoutMs: options.timeoutMs ?? 30_000,
  });
  const send = (c: Context, { status, body }: Reply) =>
    c.json(body as object, status as ContentfulStatusCode);
  const app = new Hono<OnNode>()
    .post("/sql", async (c) => send(c, await handleSql(c, pools)))
    .all("/sql", (c) => send(c, { status: 405, body: { message: "only POST is supported" } }))
    .notFound((c) => send(c, { status: 404, body: { message: `no route ${c.req.method} ${c.req.path}` } }))
    .onError((error, c) => send(c, failure(error)));
  const server = await serveOnNode(app, { port: options.port });
  return {
    url: `${server.url}/sql`,
    port: server.port,
    async close() {
      await server.close();
      await pools.close();
    },
  };
}

type Pools = ReturnType<typeof createPools>;
type SqlRequest = { queries: Query[]; batch: boolean };

/** Runs the request's query (or batch) on one pooled connection. */
async function handleSql(c: Context<OnNode>, pools: Pools): Promise<Reply> {
  const request = await readSqlRequest(c);
  if ("status" in request) return request;
  let pool: pg.Pool;
  try {
    pool = pools.poolFor(c.req.header("neon-connection-string") ?? "");
  } catch {
    return { status: 400, body: { message: "invalid Neon-Connection-String" } };
  }
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    return failure(error);
  }
  return runOnConnection(c, pool, client, request);
}

/** The query or the batch of queries the request asks for, or the reply refusing it. */
async function readSqlRequest(c: Context<OnNode>): Promise<SqlRequest | Reply> {
  if (c.req.header("neon-raw-text-output") !== "true")
    return notImplemented("typed JSON output (send Neon-Raw-Text-Output: true, as the Neon driver does)");
  let body: { queries?: unknown };
  try {
    body = await c.req.json();
  } catch {
    return { status: 400, body: { message: "request body is not valid JSON" } };
  }
  const arrayMode = c.req.header("neon-array-mode") === "true";
  const batch = Array.isArray(body.queries);
  const queries = batch
    ? (body.queries as unknown[]).map((q) => toQuery(q, arrayMode))
    : [toQuery(body, arrayMode)];
  if (queries.some((q) => q === null)) return { status: 400, body: { message: "expected {query, params}" } };
  return { queries: queries as Query[], batch };
}

/** Runs the request on `client`, a batch in one transaction; a connection in doubt is discarded, not reused. */
async function runOnConnection(
  c: Context<OnNode>,
  pool: pg.Pool,
  client: pg.PoolClient,
  { queries, batch }: SqlRequest,
): Promise<Reply> {
  // The client went away: cancel what runs (pg_cancel_backend) and never reuse the connection.
  const gone = c.env.gone;
  let discard = false;
  const cancel = () => {
    discard = true;
    void cancelBackend(pool, client);
  };
  gone.addEventListener("abort", cancel, { once: true });
  if (gone.aborted) cancel();
  try {
    if (!batch) return { status: 200, body: await runQuery(client, queries[0] as Query) };
    await client.query(begin(c));
    try {
      const results = [];
      for (const q of queries) results.push(await runQuery(client, q));
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
}

function begin(c: Context): string {
  const isolation = ISOLATION[c.req.header("neon-batch-isolation-level") ?? ""];
  const readOnly = c.req.header("neon-batch-read-only");
  const deferrable = c.req.header("neon-batch-deferrable");
  return [
    "BEGIN",
    isolation ? `ISOLATION LEVEL ${isolation}` : "",
    readOnly === "true" ? "READ ONLY" : readOnly === "false" ? "READ WRITE" : "",
    deferrable === "true" ? "DEFERRABLE" : deferrable === "false" ? "NOT DEFERRABLE" : "",
  ]
    .filter(Boolean)
    .join(" ");
}

function notImplemented(feature: string): Reply {
  return { status: 501, body: { message: `${feature} is not implemented by the local Neon endpoint` } };
}
