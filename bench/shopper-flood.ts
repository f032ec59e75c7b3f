/**
 * One shopper drives the stores? A flood from ONE token and ONE client address on each shopper route
 * (20 connections, closed loop, a few seconds each), with what reached the stores counted at the stores
 * (Postgres statements from pg_stat_statements, Redis commands from INFO commandstats) per second and
 * per request; then the same flood again while other shoppers buy at a steady rate, against their buy
 * latency with no flood. Issue 21's measure: run it on a commit before the route limits for "before".
 *
 * @example
 * npx tsx bench/shopper-flood.ts                       # the engine on Bun, 3 s per row
 * npx tsx bench/shopper-flood.ts --runtime deno --seconds 5
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { ServerRuntimeName } from "../local/server-runtime";
import { operator } from "./clients/admin";
import type { LatencySummary } from "./clients/protocol";
import { bystanders, closedLoop, sleep, targets } from "./clients/shopper-flood-load";
import { PgStats } from "./measure/pg-stats";
import { RedisStats } from "./measure/redis-stats";
import { startEngine } from "./setup/engine-server";
import { type BenchEnvironment, startEnvironment } from "./setup/environment";

export type FloodRow = {
  route: string;
  requestsPerSecond: number;
  statuses: Record<string, number>;
  postgresPerSecond: number | null;
  redisPerSecond: number;
  postgresPerRequest: number | null;
  redisPerRequest: number;
  /** other shoppers' buys (one unit, own token and address) at `buyRate`/s during the same flood */
  bystanderBuys: LatencySummary;
};
export type FloodResult = {
  runtime: string;
  seconds: number;
  connections: number;
  buyRate: number;
  alone: LatencySummary;
  rows: FloodRow[];
};

/** Every route's row: the flood alone (store cost), then the flood with bystanders' buys (their latency). */
export async function shopperFlood(
  env: BenchEnvironment,
  engine: { runtime: string; url: string },
  o: { seconds: number; connections: number; buyRate: number; log: (line: string) => void },
): Promise<FloodResult> {
  const redis = new RedisStats(env.redisUrl);
  const pg = new PgStats(env.databaseUrl);
  await pg.open();
  try {
    const sale = await operator(engine.url, env.adminToken).createSale(
      `flood-${Date.now().toString(36)}`,
      1_000_000,
      10,
    );
    const routes = await targets(env, engine.url, sale.saleId, sale.productToken);
    const alone = await bystanders(env, engine.url, sale.productToken, o.buyRate, o.seconds);
    o.log(`bystanders alone: p50 ${alone.p50} ms, p99 ${alone.p99} ms`);
    const rows: FloodRow[] = [];
    for (const t of routes) {
      await sleep(1_200); // the order pipeline of the previous buys settles; a new limit window
      const [r0, p0] = [await redis.snapshot(), await pg.snapshot()];
      const started = performance.now();
      const flood = await closedLoop(t.call, o.connections, o.seconds);
      const elapsed = (performance.now() - started) / 1000;
      const [r1, p1] = [await redis.snapshot(), await pg.snapshot()];
      const rd = RedisStats.delta(r0, r1);
      const commands = rd.scripts.calls + rd.otherCalls;
      const statements = PgStats.delta(p0, p1).statements;
      const during = await Promise.all([
        closedLoop(t.call, o.connections, o.seconds),
        bystanders(env, engine.url, sale.productToken, o.buyRate, o.seconds),
      ]);
      const row: FloodRow = {
        route: t.route,
        requestsPerSecond: Math.round(flood.requests / elapsed),
        statuses: flood.statuses,
        postgresPerSecond: statements === null ? null : Math.round(statements / elapsed),
        redisPerSecond: Math.round(commands / elapsed),
        postgresPerRequest: statements === null ? null : round3(statements / flood.requests),
        redisPerRequest: round3(commands / flood.requests),
        bystanderBuys: during[1],
      };
      o.log(`  ${t.route}: ${JSON.stringify(row)}`);
      rows.push(row);
    }
    return {
      runtime: engine.runtime,
      seconds: o.seconds,
      connections: o.connections,
      buyRate: o.buyRate,
      alone,
      rows,
    };
  } finally {
    await redis.close();
    await pg.close().catch(() => undefined);
  }
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;

/** The rows as a Markdown table. */
export function floodTable(r: FloodResult): string {
  const lines = [
    `${r.runtime}: one token, one address, ${r.connections} connections, ${r.seconds} s per row; bystanders buy ${r.buyRate}/s (alone: p50 ${r.alone.p50} ms, p99 ${r.alone.p99} ms)`,
    "",
    "| route | requests/s | answers | Postgres stmts/s | Redis cmds/s | per request (pg / redis) | bystander buy p50 / p99 ms |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const x of r.rows) {
    const answers = Object.entries(x.statuses)
      .map(([s, n]) => `${s}×${n}`)
      .join(" ");
    lines.push(
      `| ${x.route} | ${x.requestsPerSecond} | ${answers} | ${x.postgresPerSecond ?? "–"} | ${x.redisPerSecond} | ${x.postgresPerRequest ?? "–"} / ${x.redisPerRequest} | ${x.bystanderBuys.p50} / ${x.bystanderBuys.p99} |`,
    );
  }
  return lines.join("\n");
}

/**
 * The flood rows on one server runtime with the engine's default limits: its own engine process, the
 * table printed and bench/output/shopper-flood.json written. `npm run bench` runs it on Bun (`--skip flood`).
 */
export async function floodPhase(
  env: BenchEnvironment,
  o: {
    runtime: ServerRuntimeName;
    seconds: number;
    connections: number;
    buyRate: number;
    out: string;
    log: (line: string) => void;
  },
): Promise<FloodResult> {
  const engine = await startEngine({ ...env, vars: { ...env.vars, ...FLOOD_VARS } }, o.runtime, (line) =>
    o.log(`engine: ${line}`),
  );
  try {
    const result = await shopperFlood(env, { runtime: o.runtime, url: engine.url }, o);
    o.log(`\n${floodTable(result)}`);
    await mkdir(o.out, { recursive: true });
    await writeFile(join(o.out, "shopper-flood.json"), `${JSON.stringify(result, null, 2)}\n`);
    return result;
  } finally {
    await engine.stop();
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      runtime: { type: "string", default: "bun" },
      seconds: { type: "string", default: "3" },
      connections: { type: "string", default: "20" },
      "buy-rate": { type: "string", default: "50" },
      out: { type: "string", default: join(import.meta.dirname, "output") },
    },
  });
  const log = (line: string) => console.log(line);
  const env = await startEnvironment(log, { worker: false });
  try {
    await floodPhase(env, {
      runtime: values.runtime as ServerRuntimeName,
      seconds: Number(values.seconds),
      connections: Number(values.connections),
      buyRate: Number(values["buy-rate"]),
      out: values.out,
      log,
    });
  } finally {
    await env.stop();
  }
}

/** The engine's own defaults for the limits (not the crowd's bench limits), and no minute sweep while counting. */
const FLOOD_VARS = {
  RATE_LIMIT_USER_PER_WINDOW: "20",
  RATE_LIMIT_IP_PER_WINDOW: "2000",
  RATE_LIMIT_WINDOW_SECONDS: "1",
  CRON_SCHEDULE: "off",
  REALTIME_PING_MS: "1000",
};

if (process.argv[1]?.endsWith("shopper-flood.ts")) {
  main().catch((error) => {
    console.error(error);
    process.exit(2);
  });
}
