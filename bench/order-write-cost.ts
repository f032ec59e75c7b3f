/**
 * What one order write costs Postgres, alone: the order-write job's statement (src/orders/order-writes.ts
 * `writeOrders`) run in batches of 50 over one TCP connection against a fresh embedded Postgres (fsync
 * off, as the local stack), nothing else on that server. Reports the CPU of the connection's backend
 * process per order (/proc, 10 ms ticks, so thousands of orders per round) and the wall time per
 * batch, for the statement as the engine sends it (unnamed: planned at each call) and as a named
 * prepared statement (planned once per connection). Alone it is the cheaper (2026-11-28: 17–27 µs of
 * backend CPU per order against 45–60), but in the rush it was the dearer: bench/webhook-fanout.ts with
 * rounds of 0 then 1 endpoint cost Postgres 413 µs per order with the endpoint, named, against 250
 * unnamed (227 named when the endpoint was there from the first write: a generic plan made while a small
 * table such as webhook_endpoints was in another state seems to stay, as so small a table is not analyzed
 * again). So the engine does not prepare it. Run it on another checkout (a commit before a change) with
 * the same command to compare the two.
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
       values ('s1', 'p1', 'cost', 100, 100000000, 2, now() - interval '1 hour', now() + interval '1 day', 600, 'tok')`),
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
