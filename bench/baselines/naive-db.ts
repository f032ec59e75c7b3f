/**
 * The naive baseline's Postgres side: its own database (`bench_naive`) with a hot stock row, and the
 * transaction each attempt runs on it with a pooled `pg` client,
 *
 *   BEGIN; UPDATE naive_stock SET n = n - $q WHERE id = 1 AND n >= $q RETURNING n;
 *          INSERT INTO naive_orders (user_id, quantity) VALUES (…) RETURNING id; COMMIT
 *
 * Shared by every flavour of the naive server (bench/baselines/naive-server.ts) and the bench's orchestrator.
 */
import pg from "pg";

export const NAIVE_DATABASE = "bench_naive";

/** Creates the baseline's database and tables if needed and resets the stock to `stock` units. */
export async function prepareNaiveDatabase(serverUrl: string, stock: number): Promise<string> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const found = await admin.query("select 1 from pg_database where datname = $1", [NAIVE_DATABASE]);
    if (found.rowCount === 0) await admin.query(`create database ${NAIVE_DATABASE}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${NAIVE_DATABASE}`;
  const db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  try {
    await db.query(`
      create table if not exists naive_stock (id int primary key, n int not null);
      create table if not exists naive_orders (
        id bigserial primary key, user_id text not null, quantity int not null,
        created_at timestamptz not null default now());
      truncate naive_orders;
      insert into naive_stock (id, n) values (1, ${Number(stock)})
        on conflict (id) do update set n = excluded.n;`);
  } finally {
    await db.end();
  }
  return url.toString();
}

/** What the naive server sold: units and orders in its table, stock left on the hot row. */
export async function naiveTotals(
  naiveUrl: string,
): Promise<{ units: number; orders: number; stockLeft: number }> {
  const client = new pg.Client({ connectionString: naiveUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ units: number; orders: number; n: number }>(
      "select coalesce(sum(quantity), 0)::int as units, count(*)::int as orders, (select n from naive_stock where id = 1) as n from naive_orders",
    );
    const row = rows[0];
    return { units: row?.units ?? 0, orders: row?.orders ?? 0, stockLeft: row?.n ?? -1 };
  } finally {
    await client.end();
  }
}

/** One buy attempt: the transaction on the hot row; null when the stock does not cover `quantity`. */
export async function naiveBuy(
  pool: pg.Pool,
  userId: string,
  quantity: number,
): Promise<{ orderId: string } | null> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const updated = await client.query(
      "UPDATE naive_stock SET n = n - $1 WHERE id = 1 AND n >= $1 RETURNING n",
      [quantity],
    );
    if (updated.rowCount === 0) {
      await client.query("ROLLBACK");
      return null;
    }
    const inserted = await client.query<{ id: string }>(
      "INSERT INTO naive_orders (user_id, quantity) VALUES ($1, $2) RETURNING id",
      [userId, quantity],
    );
    await client.query("COMMIT");
    return { orderId: String(inserted.rows[0]?.id) };
  } catch (e) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}
