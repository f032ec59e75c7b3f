/**
 * What one order write costs Postgres, alone: the order-write job's statement (src/orders/order-writes.ts
 * `writeOrders`) run in batches of 50 one-line orders (as the engine's buys carry them) over one TCP
 * connection against a fresh embedded Postgres (fsync off, as the local stack), nothing else on that
 * server. Reports the CPU of the connection's backend process per order (/proc, 10 ms ticks, so thousands
 * of orders per round) and the wall time per batch, for the statement as the engine sends it (unnamed:
 * planned at each call) and as a named prepared statement (planned once per connection, then a generic
 * plan: the dearer, 2026-11-29); `--connections N` also runs it on N connections at once, `--explain`
 * prints one batch's plan as Postgres ran it. It checks at the end that every batch wrote its orders.
 * Until 2026-11-29 its sale had no variant row, so the statement wrote nothing and the figures quoted
 * then (17–60 µs per order) measured an empty write; written, an order costs 100–150 µs here, close to
 * what the rush shows (bench/webhook-fanout.ts). Run it on another checkout (a commit before a change)
 * with the same command to compare the two, or pass the schema change as `--before-sql`.
 *
 * @example
 * npx tsx bench/order-write-cost.ts --batches 400
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type SQLWrapper, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import pg from "pg";
import { migrate } from "../local/migrate";
import { startPostgres } from "../local/postgres-process";
import type { SqlStore } from "../src/db/sql-store";
import { writeOrders } from "../src/orders/order-writes";
import type { QueuedOrder } from "../src/stock/queued-order";
import { connectPostgresTcp } from "../src/stores/postgres-tcp";
import { loadAverage } from "./measure/run-meta";

const { values: args } = parseArgs({
  options: {
    batches: { type: "string", default: "400" },
    size: { type: "string", default: "50" },
    // also run the statement as sent on this many connections at once (as several order-write jobs do in a rush)
    connections: { type: "string", default: "1" },
    // print the plan of one batch, as Postgres ran it (EXPLAIN ANALYZE), after the rounds
    explain: { type: "boolean", default: false },
    // SQL run after the migrations (an experiment on the schema, say)
    "before-sql": { type: "string", default: "" },
  },
});

const dialect = new PgDialect();

const ticks = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks (10 ms)
};

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "order-write-cost-"));
  const postgres = await startPostgres({ dir, durable: false });
  try {
    await migrate(postgres.databaseUrl);
    const db = connectPostgresTcp(postgres.databaseUrl, { max: 1 });
    if (args["before-sql"]) await db.execute(sql.raw(args["before-sql"]));
    const now = Date.now();
    await db.execute(
      sql.raw(`insert into sales (id, product_id, name, price_cents, initial_stock, per_user_limit, starts_at, ends_at,
         payment_window_seconds, product_token)
       values ('s1', 'p1', 'cost', 100, 100000000, 2, now() - interval '1 hour', now() + interval '1 day', 600, 'tok');
       insert into sale_variants (sale_id, variant_id, position, name, price_cents, initial_stock)
       values ('s1', 'default', 0, 'cost', 100, 100000000)`),
    );
    const backend = Number((await db.execute(sql`select pg_backend_pid() as pid`)).rows[0]?.pid);
    const client = new pg.Client({ connectionString: postgres.databaseUrl });
    client.on("error", () => {}); // Postgres stopping at the end (or after a failure) ends its connection
    await client.connect();
    const clientBackend = Number((await client.query("select pg_backend_pid() as pid")).rows[0]?.pid);
    const size = Number(args.size);
    let n = 0;
    const batch = (): QueuedOrder[] =>
      Array.from({ length: size }, () => {
        n++;
        return {
          orderId: `s1-order-${n.toString(36).padStart(8, "0")}`,
          saleId: "s1",
          userId: `user-${n}`,
          quantity: 1,
          createdAt: now,
          expiresAt: now + 600_000,
          epoch: 1,
          // the reservation script's lines, as the engine's buys carry them (one per variant bought)
          items: [{ variantId: "default", quantity: 1, priceCents: 100 }],
        };
      });
    // the same store, its statements named: planned once per connection (node-postgres' `name`), one
    // name per statement text
    const names = new Map<string, string>();
    const prepared: SqlStore = Object.assign(Object.create(db) as SqlStore, {
      execute: async (q: SQLWrapper) => {
        const { sql: text, params } = dialect.sqlToQuery(q.getSQL());
        const name = names.get(text) ?? `statement-${names.size + 1}`;
        names.set(text, name);
        return { rows: (await client.query({ name, text, values: params })).rows };
      },
    });
    for (const [name, store, pid] of [
      ["warm-up", db, backend],
      ["as sent", db, backend],
      ["prepared", prepared, clientBackend],
      ["as sent", db, backend],
      ["prepared", prepared, clientBackend],
    ] as const) {
      const count = name === "warm-up" ? 20 : Number(args.batches);
      const t0 = ticks(pid);
      const started = performance.now();
      for (let i = 0; i < count; i++) await writeOrders(store, batch());
      const wall = (performance.now() - started) / count;
      const cpuUs = ((ticks(pid) - t0) * 10_000) / (count * size);
      if (name !== "warm-up")
        console.log(
          `${name.padEnd(10)} ${count} batches of ${size}: backend CPU ${cpuUs.toFixed(1)} µs per order, ${wall.toFixed(2)} ms per batch`,
        );
    }
    const parallel = Number(args.connections);
    if (parallel > 1) {
      const pool = connectPostgresTcp(postgres.databaseUrl, { max: parallel });
      const pids = await Promise.all(
        Array.from({ length: parallel }, async () => {
          // each worker's first statement opens its own connection: note that backend
          return Number(
            (await pool.execute(sql`select pg_backend_pid() as pid, pg_sleep(0.2)`)).rows[0]?.pid,
          );
        }),
      );
      const count = Number(args.batches);
      const t0 = pids.map(ticks);
      const started = performance.now();
      await Promise.all(
        pids.map(async () => {
          for (let i = 0; i < Math.ceil(count / parallel); i++) await writeOrders(pool, batch());
        }),
      );
      const wall = (performance.now() - started) / count;
      const spent = pids.reduce((sum, pid, i) => sum + ticks(pid) - (t0[i] ?? 0), 0);
      console.log(
        `${`as sent ×${parallel}`.padEnd(10)} ${count} batches of ${size} on ${new Set(pids).size} connections at once: backend CPU ${((spent * 10_000) / (count * size)).toFixed(1)} µs per order, ${wall.toFixed(2)} ms per batch`,
      );
      await pool.close();
    }
    if (args.explain) {
      const explained: SqlStore = Object.assign(Object.create(db) as SqlStore, {
        execute: async (q: SQLWrapper) => {
          const { sql: text, params } = dialect.sqlToQuery(q.getSQL());
          const plan = await client.query({
            text: `explain (analyze, buffers, verbose) ${text}`,
            values: params,
          });
          for (const row of plan.rows) console.log(row["QUERY PLAN"]);
          return { rows: [] };
        },
      });
      await client.query("begin");
      await writeOrders(explained, batch());
      await client.query("rollback");
      n -= size;
    }
    // every batch above wrote its orders (a sale the statement cannot write to would measure nothing)
    const written = Number((await db.execute(sql`select count(*) as n from orders`)).rows[0]?.n);
    if (written !== n) throw new Error(`${written} of ${n} orders written`);
    console.log(`load average ${loadAverage()}`);
    await db.close();
    await client.end();
  } finally {
    await postgres.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
