/**
 * Drives the TCP store adapters on whatever runtime runs this file (Node, Bun, Deno): a script with
 * the NOSCRIPT fallback, a pipeline, a transaction, a Postgres transaction and a conflict. Prints one
 * JSON line of what it saw; test/integration/stores/tcp-stores-on-runtimes.test.ts compares it across runtimes.
 *
 * @example
 * REDIS_URL=redis://… DATABASE_URL=postgres://… npx bun test/support/store-smoke.ts
 */

import { createHash } from "node:crypto";
import process from "node:process";
import { sql } from "drizzle-orm";
import { withDb } from "../../src/db/client";
import { defineScript, runScript } from "../../src/stock/script";
import { connectPostgresTcp } from "../../src/stores/postgres-tcp";
import { toRecord } from "../../src/stores/redis-reply";
import { connectRedisTcp } from "../../src/stores/redis-tcp";

const runtime = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";
const redis = connectRedisTcp(process.env.REDIS_URL ?? "");
const db = connectPostgresTcp(process.env.DATABASE_URL ?? "");
const k = (key: string) => `smoke:${runtime}:${key}`;
try {
  const source = `return {redis.call('INCRBY', KEYS[1], ARGV[1]), ARGV[2]} -- ${runtime}`;
  const script = defineScript("smoke", source, createHash("sha1").update(source).digest("hex"));
  const first = await runScript(redis, script, [k("n")], ["2", "a"]);
  await redis.pipeline().hset(k("h"), { f: "v" }).sadd(k("s"), "m").exec();
  const piped = await redis.pipeline().hgetall(k("h")).get(k("n")).hexists(k("h"), "f").exec();
  const atomic = await redis.multi().incr(k("n")).hget(k("h"), "f").exec();
  const table = sql.raw(`smoke_${runtime}`);
  await db.execute(sql`create table if not exists ${table} (id int primary key, at timestamptz not null)`);
  await db.execute(sql`truncate ${table}`);
  const tx = await db.transaction([
    sql`insert into ${table} values (1, ${"2030-01-02T03:04:05Z"}) returning id, at`,
    sql`select count(*)::int as n from ${table}`,
  ]);
  const conflict = await withDb(() => db.execute(sql`insert into ${table} values (1, now())`)).catch(
    (e: { reason?: string }) => e.reason,
  );
  console.log(
    JSON.stringify({
      runtime,
      first,
      record: toRecord(piped[0]),
      piped: piped.slice(1),
      atomic,
      tx,
      conflict,
    }),
  );
} finally {
  await redis.close();
  await db.close();
}
process.exit(0);
