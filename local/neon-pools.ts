/**
 * The connection pools of the local Neon HTTP stand-in: one per user, password and database named in the
 * request's `Neon-Connection-String`, always to the host and port of `databaseUrl` (the target is pinned:
 * this is not an open relay). `max` connections each; a request waits up to `timeoutMs` for one, as
 * behind Neon's PgBouncer, before it is answered 503.
 *
 * @example
 * const pools = createPools({ databaseUrl, max: 20, timeoutMs: 30_000 });
 * const client = await pools.poolFor(req.headers.get("neon-connection-string") ?? "").connect();
 */
import pg from "pg";

export function createPools(options: { databaseUrl: string; max: number; timeoutMs: number }) {
  const target = new URL(options.databaseUrl);
  const pools = new Map<string, pg.Pool>();
  return {
    /** The pool for the credentials and database in `connectionString` (throws when it is not a URL). */
    poolFor(connectionString: string): pg.Pool {
      const given = new URL(connectionString || options.databaseUrl);
      const user = decodeURIComponent(given.username || target.username);
      const password = decodeURIComponent(given.password || target.password);
      const database = decodeURIComponent(given.pathname.slice(1) || target.pathname.slice(1));
      const key = JSON.stringify([user, password, database]);
      let pool = pools.get(key);
      if (!pool) {
        pool = new pg.Pool({
          host: target.hostname,
          port: Number(target.port || 5432),
          user,
          password,
          database,
          max: options.max,
          connectionTimeoutMillis: options.timeoutMs,
        });
        pool.on("error", () => undefined);
        // A client checked out between two statements when Postgres stops gets the server's FATAL as an
        // error event (the pool listens only while it is idle): the next statement fails instead.
        pool.on("connect", (client) => client.on("error", () => undefined));
        pools.set(key, pool);
      }
      return pool;
    },
    async close(): Promise<void> {
      await Promise.all([...pools.values()].map((p) => p.end().catch(() => undefined)));
    },
  };
}
