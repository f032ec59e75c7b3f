/**
 * Which pooled TCP Postgres driver the server runtimes use under drizzle: node-postgres (`pg`) or
 * postgres.js, each with a pool of 10 and 50 concurrent callers issuing, back to back, an order-like
 * INSERT … RETURNING and a SELECT by primary key through `db.execute(sql…)`. Prints statements/s and
 * the process's CPU µs per statement, one JSON line per driver.
 *
 * @example
 * npx tsx bench/drivers/postgres-clients.ts                              # starts its own embedded Postgres
 * DATABASE_URL=postgres://… npx bun bench/drivers/postgres-clients.ts    # against a running server
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { sql } from "drizzle-orm";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { drizzle as drizzlePostgresJs } from "drizzle-orm/postgres-js";
import pg from "pg";
import postgres from "postgres";
import { startPostgres } from "../../local/postgres-process";
import { backToBack, CALLERS, runtime } from "./callers";

const CALLS = Number(process.env.BENCH_CALLS ?? 10_000);
type Execute = (query: ReturnType<typeof sql>) => Promise<unknown>;

async function bench(name: string, execute: Execute) {
  const table = `bench_${name.replace(/\W/g, "_")}`;
  await execute(sql.raw(`drop table if exists ${table}`));
  await execute(
    sql.raw(`create table ${table} (id text primary key, user_id text not null, quantity int not null,
      created_at timestamptz not null default now())`),
  );
  const insert = (i: number) =>
    execute(sql`insert into ${sql.raw(table)} (id, user_id, quantity) values (${`o${i}`}, ${`u${i % 997}`}, 1)
      on conflict do nothing returning id, created_at`);
  await backToBack(500, (i) => insert(CALLS + i));
  const inserts = await backToBack(CALLS, insert);
  const selects = await backToBack(CALLS, (i) =>
    execute(sql`select id, user_id, quantity, created_at from ${sql.raw(table)} where id = ${`o${i}`}`),
  );
  console.log(JSON.stringify({ runtime, driver: name, pool: 10, callers: CALLERS, inserts, selects }));
}

const dir = process.env.DATABASE_URL ? null : await mkdtemp(join(tmpdir(), "flashsale-bench-pg-"));
const server = dir ? await startPostgres({ port: 0, dir, durable: false }) : null;
const url = process.env.DATABASE_URL ?? server?.databaseUrl ?? "";

const pool = new pg.Pool({ connectionString: url, max: 10 });
const viaPg = drizzlePg({ client: pool });
await bench("pg", (q) => viaPg.execute(q));
await pool.end();

const client = postgres(url, { max: 10, onnotice: () => {} });
const viaPostgresJs = drizzlePostgresJs({ client });
await bench("postgres.js", (q) => viaPostgresJs.execute(q));
await client.end();

await server?.stop();
if (dir) await rm(dir, { recursive: true, force: true });
process.exit(0);
