/**
 * Where an admitted order's CPU goes: the engine on Bun or Deno takes in-stock buys from wrk (a distinct
 * shopper token and address per request) while the order pipeline runs, then prints CPU per order of
 * each process (engine, redis-server, Postgres, this process with the QStash stand-in), Postgres's
 * statements by execution time (pg_stat_statements), Redis's commands per order (INFO commandstats) and
 * QStash messages per order. With ENGINE_RUNTIME_FLAGS="--cpu-prof --cpu-prof-md --cpu-prof-dir=DIR" the
 * engine also writes a CPU profile on exit.
 *
 * @example
 * npx tsx --import ./local/lua-as-text.mjs bench/order-cost.ts --runtime bun --seconds 8
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import type { ServerRuntimeName } from "../local/server-runtime";
import { operator } from "./clients/admin";
import { runWrk, writeTokens } from "./clients/wrk";
import { type StackCpu, stackCpu } from "./measure/proc";
import { type RedisSnapshot, RedisStats } from "./measure/redis-stats";
import { loadAverage } from "./measure/run-meta";
import { startEngine } from "./setup/engine-server";
import { startEnvironment } from "./setup/environment";

const { values: args } = parseArgs({
  options: {
    runtime: { type: "string", default: "bun" },
    seconds: { type: "string", default: "8" },
    connections: { type: "string", default: "50" },
    tokens: { type: "string", default: "200000" },
    // hold QStash deliveries while wrk runs: the buy requests and the order pipeline measured apart
    split: { type: "boolean", default: true },
    // SQL run before the load (an experiment on the schema, say)
    "before-sql": { type: "string", default: "" },
  },
});

async function main(): Promise<void> {
  const log = (line: string) => console.log(line);
  const env = await startEnvironment(log, { worker: false });
  const dir = join(import.meta.dirname, "output", "order-cost");
  await mkdir(dir, { recursive: true });
  const engine = await startEngine(env, args.runtime as ServerRuntimeName, (l) => log(`  engine: ${l}`));
  const redis = new RedisStats(env.redisUrl);
  const db = new pg.Client({ connectionString: env.databaseUrl });
  await db.connect();
  try {
    await db.query("create extension if not exists pg_stat_statements");
    if (args["before-sql"]) await db.query(args["before-sql"]);
    const op = operator(engine.url, env.adminToken);
    const sale = await op.createSale(`order-cost-${Date.now().toString(36)}`, 5_000_000, 1);
    const tokens = await writeTokens(
      dir,
      env.jwtSecret,
      `oc-${Date.now().toString(36)}`,
      Number(args.tokens),
    );
    const cpu = () => stackCpu(engine.child.pid ?? 0, env.pids);
    const control = (what: "pause" | "resume") =>
      fetch(`${env.qstashUrl}/__local/${what}`, {
        method: "POST",
        headers: { authorization: `Bearer ${env.qstashToken}` },
      }).then((r) => r.arrayBuffer());
    const orderCount = async () =>
      Number(
        (await db.query<{ n: string }>("select count(*) as n from orders where sale_id = $1", [sale.saleId]))
          .rows[0]?.n ?? 0,
      );
    await db.query("select pg_stat_statements_reset()");
    // 1. the buy requests alone: deliveries held, so the engine answers and publishes, nothing is written
    if (args.split) await control("pause");
    const r0 = await redis.snapshot();
    const a = cpu();
    const wrk = await runWrk(
      {
        url: engine.url,
        method: "POST",
        path: `/api/buy/${sale.productToken}`,
        tokens,
        seconds: Number(args.seconds),
        connections: Number(args.connections),
        body: '{"quantity":1}',
      },
      dir,
    );
    await new Promise((r) => setTimeout(r, 500)); // the last publish batches go out
    const b = cpu();
    const r1 = await redis.snapshot();
    // 2. the order pipeline: deliveries released (or, unsplit, the last batches landing)
    if (args.split) await control("resume");
    const admitted = wrk.requests - wrk.non2xx;
    const deadline = Date.now() + 120_000;
    while ((await orderCount()) < admitted && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    const c = cpu();
    const r2 = await redis.snapshot();
    const orders = await orderCount();
    const per = (d: number) => (d / Math.max(1, orders)).toFixed(1);
    const row = (name: string, x: StackCpu, y: StackCpu) =>
      log(
        `  ${name.padEnd(22)} engine ${per(y.server - x.server)} · redis ${per(y.redis - x.redis)} · postgres ${per(y.postgres - x.postgres)} · bench+qstash ${per(y.self - x.self)} · total ${per(y.server - x.server + y.redis - x.redis + y.postgres - x.postgres + y.self - x.self)}`,
      );
    log(
      `\n${args.runtime}: ${wrk.requests} requests (${wrk.reqPerSec}/s, p99 ${(wrk.p99Us / 1000).toFixed(1)} ms), ${orders} orders written`,
    );
    log("CPU µs per order:");
    if (args.split) {
      row("buy requests", a, b);
      row("order pipeline", b, c);
    }
    row("all", a, c);
    const perCommand = (from: RedisSnapshot, to: RedisSnapshot) => {
      const d = RedisStats.delta(from, to);
      const calls = {
        evalsha: d.scripts.calls,
        ...Object.fromEntries(Object.entries(d.other).map(([n, c]) => [n, c.calls])),
      };
      return Object.entries(calls)
        .filter(([, n]) => n > 0)
        .map(([name, n]) => `${name} ${(n / Math.max(1, orders)).toFixed(3)}`)
        .join(", ");
    };
    log(`\nRedis commands per order, buy requests: ${perCommand(r0, r1)}`);
    log(`Redis commands per order, pipeline: ${perCommand(r1, r2)}`);
    const top = await db.query<{ query: string; calls: string; ms: string; rows: string }>(
      `select query, calls, round(total_exec_time::numeric, 1) as ms, rows from pg_stat_statements
       order by total_exec_time desc limit 12`,
    );
    log("\nPostgres statements by execution time:");
    for (const row of top.rows)
      log(
        `  ${row.ms.padStart(9)} ms  ${row.calls.padStart(6)} calls  ${row.rows.padStart(7)} rows  ${row.query.replace(/\s+/g, " ").slice(0, 150)}`,
      );
    log(`\nload average ${loadAverage()}`);
  } finally {
    await redis.close();
    await db.end();
    await engine.stop();
    await env.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
