/**
 * What one order write costs Postgres, alone: the order-write job's statement (src/orders/order-writes.ts
 * `writeOrders`) run in batches of 50 over one TCP connection against a fresh embedded Postgres (fsync
 * off, as the local stack), nothing else on that server. Reports the CPU of the connection's backend
 * process per order (/proc, 10 ms ticks, so thousands of orders per round) and the wall time per
 * batch, for the statement as the engine sends it (named: prepared once per connection) and unnamed
 * (parsed and planned at each call), and on a connection that prepared it on empty tables and keeps it
 * while they grow (the first write of a new shop: its plan must keep up). Run it on another checkout
 * (a commit before a change) with the same command to compare the two.
 *
 * @example
 * npx tsx bench/order-write-cost.ts --batches 400
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type SQLWrapper, sql } from "drizzle-orm";
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
    // batches written at once, each stream on its own connection: with more than one, the CPU of the
    // whole server (every process of it) per order, as concurrent order-write jobs load it
    streams: { type: "string", default: "1" },
    // SQL run after the migrations (an experiment on the schema, say)
    "before-sql": { type: "string", default: "" },
  },
});

const ticks = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks (10 ms)
};

/** CPU ticks of a Postgres server: its postmaster and every process it started (ended ones counted by cutime). */
const serverTicks = (postmaster: number) => {
  let sum = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      const pid = Number(entry);
      if (pid === postmaster || Number(fields[1]) === postmaster)
        sum += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // the process ended meanwhile
    }
  }
  return sum;
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
    // the engine's store with its statements' names dropped: parsed and planned at each call
    const unnamed: SqlStore = Object.assign(Object.create(db) as SqlStore, {
      execute: (q: SQLWrapper) => db.execute(q),
    });
    // a second connection that prepares the statement on empty tables, then keeps it while they grow
    const young = connectPostgresTcp(postgres.databaseUrl, { max: 1 });
    const pidOf = async (store: SqlStore) =>
      Number((await store.execute(sql`select pg_backend_pid() as pid`)).rows[0]?.pid);
    const [backend, youngBackend] = [await pidOf(db), await pidOf(young)];
    const batches = Number(args.batches);
    const streams = Number(args.streams);
    if (streams > 1) {
      const postmaster = Number(readFileSync(join(dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
      const pool = connectPostgresTcp(postgres.databaseUrl, { max: streams });
      const poolUnnamed: SqlStore = Object.assign(Object.create(pool) as SqlStore, {
        execute: (q: SQLWrapper) => pool.execute(q),
      });
      for (const [name, store] of [
        ["unnamed", poolUnnamed],
        ["named", pool],
        ["unnamed", poolUnnamed],
        ["named", pool],
      ] as const) {
        const t0 = serverTicks(postmaster);
        const started = performance.now();
        await Promise.all(
          Array.from({ length: streams }, async () => {
            for (let i = 0; i < batches; i++) await writeOrders(store, batch());
          }),
        );
        const wall = (performance.now() - started) / batches;
        const cpuUs = ((serverTicks(postmaster) - t0) * 10_000) / (streams * batches * size);
        console.log(
          `${name.padEnd(8)} ${streams} streams × ${batches} batches of ${size}: server CPU ${cpuUs.toFixed(1)} µs per order, ${wall.toFixed(2)} ms per round of batches`,
        );
      }
      await pool.close();
    } else
      for (const [name, store, pid, count] of [
        ["named, planned on empty tables", young, youngBackend, 10],
        ["unnamed", unnamed, backend, batches],
        ["named (as the engine sends it)", db, backend, batches],
        ["unnamed", unnamed, backend, batches],
        ["named, planned on empty tables", young, youngBackend, batches],
      ] as const) {
        const t0 = ticks(pid);
        const started = performance.now();
        for (let i = 0; i < count; i++) await writeOrders(store, batch());
        const wall = (performance.now() - started) / count;
        const cpuUs = ((ticks(pid) - t0) * 10_000) / (count * size);
        console.log(
          `${name.padEnd(31)} ${String(count).padStart(5)} batches of ${size} (orders then ${n}): backend CPU ${cpuUs.toFixed(1)} µs per order, ${wall.toFixed(2)} ms per batch`,
        );
      }
    console.log(`load average ${loadAverage()}`);
    await db.close();
    await young.close();
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
