/**
 * The naive baseline: the obvious flash-sale server, one Postgres transaction per attempt on a hot row,
 *
 *   BEGIN; UPDATE naive_stock SET n = n - $q WHERE id = 1 AND n >= $q RETURNING n;
 *          INSERT INTO naive_orders (user_id, quantity) VALUES (…) RETURNING id; COMMIT
 *
 * behind a minimal node:http server with a pooled `pg` client. It checks the shopper's HS256 token like
 * the worker does, and answers in the contract's shapes (202 with an order id, 410 SOLD_OUT) so the same
 * load generator drives it. No rate limit, no per-user limit, no idempotency: the baseline is the
 * transaction itself. Started as a child process by `run.ts` (`NAIVE_DATABASE_URL`, `JWT_SECRET`,
 * `NAIVE_POOL`); it reports its port over IPC.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import pg from "pg";
import { verifyShopperToken } from "./jwt";

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

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

const error = (code: string, message: string) => ({ error: { code, message } });

async function readBody(req: IncomingMessage): Promise<string> {
  let body = "";
  for await (const chunk of req) body += chunk;
  return body;
}

/** One buy attempt: the transaction on the hot row. */
async function buy(pool: pg.Pool, userId: string, quantity: number): Promise<{ orderId: string } | null> {
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

export function startNaiveServer(options: { databaseUrl: string; jwtSecret: string; pool: number }) {
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.pool });
  const server = createServer(async (req, res) => {
    try {
      if (req.method !== "POST" || !req.url?.startsWith("/buy/"))
        return reply(res, 404, error("NOT_FOUND", "No such route."));
      const text = await readBody(req);
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      const userId = token ? verifyShopperToken(options.jwtSecret, token) : null;
      if (!userId) return reply(res, 401, error("UNAUTHENTICATED", "Sign in."));
      const quantity = text ? Number((JSON.parse(text) as { quantity?: unknown }).quantity ?? 1) : 1;
      if (!Number.isInteger(quantity) || quantity < 1)
        return reply(res, 400, error("INVALID_REQUEST", "Bad quantity."));
      const order = await buy(pool, userId, quantity);
      if (!order) return reply(res, 410, error("SOLD_OUT", "Sold out."));
      return reply(res, 202, { orderId: order.orderId, status: "queued", quantity });
    } catch (e) {
      return reply(res, 503, error("UNAVAILABLE", String((e as Error).message)));
    }
  });
  return { server, pool };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { server } = startNaiveServer({
    databaseUrl: process.env.NAIVE_DATABASE_URL ?? "",
    jwtSecret: process.env.JWT_SECRET ?? "",
    pool: Number(process.env.NAIVE_POOL ?? 10),
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    process.send?.({ type: "listening", port: typeof address === "object" && address ? address.port : 0 });
  });
}
