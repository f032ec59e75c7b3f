import pg from "pg";

/**
 * Retires every idle client of `pool` as soon as one client is released after a connection failure (a
 * statement timed out on a silent socket, a reset: any error without a SQLSTATE). The idle ones almost
 * surely share its fate (the same peer, the same path); left in the pool, each would cost the next
 * request that takes it a whole query timeout. A retired client gets an error, on which the pool drops
 * it (as it drops any idle client that errors) and opens a fresh one when needed. Idle clients are
 * followed through the pool's public events.
 *
 * @example
 * const pool = new pg.Pool({ query_timeout: 5_000 });
 * pool.on("error", log); // retired clients are reported there
 * retireIdleOnConnectionFailure(pool);
 */
export function retireIdleOnConnectionFailure(pool: pg.Pool): void {
  const idle = new Set<pg.PoolClient>();
  pool.on("acquire", (client) => idle.delete(client));
  pool.on("remove", (client) => idle.delete(client as pg.PoolClient));
  pool.on("release", (error, client) => {
    if (!error) {
      idle.add(client);
      return;
    }
    if (error instanceof pg.DatabaseError) return;
    for (const other of [...idle]) {
      idle.delete(other);
      other.emit("error", new Error(`retired: another connection failed (${error.message})`));
    }
  });
}
