/**
 * `npm run bench`: the seed-000 flash sale (1,000 units, limit 2, 100,000 shoppers) against the worker
 * in workerd, per-outcome probes, and the baselines in the same run (a no-op route in the same bundle,
 * the naive Postgres hot row behind a Node server, the reservation script straight on redis-server,
 * the hot-row transaction straight on Postgres). Prints a table, writes bench/output/latest.json and
 * latest.svg, and exits non-zero when the invariant does not hold. See bench/README.md.
 *
 * @example
 * npm run bench                                  # 100,000 users, 50 connections
 * npm run bench -- --users 5000 --probe 500      # a quick run while developing
 */
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { operator } from "./admin";
import { renderChart } from "./chart";
import { type Check, checkInvariant } from "./checks";
import { runHotRow, startNaive } from "./children";
import { coldBurst } from "./cold-burst";
import { type BenchEnvironment, startEnvironment } from "./environment";
import { LoadClient } from "./load-client";
import {
  type BenchResult,
  type Measured,
  type Meta,
  type PerAttempt,
  type ProbeResult,
  perAttempt,
  withoutOrderIds,
} from "./measures";
import { type Costs, Meter, type Reading } from "./meter";
import { prepareNaiveDatabase } from "./naive-server";
import type { HotRowResult } from "./pg-hot-row";
import { PgStats } from "./pg-stats";
import { probes } from "./probes";
import type { ListPlan, LoadResult, PhaseSummary, ScenarioPlan, Target } from "./protocol";
import { type RealtimeResult, realtimePhase } from "./realtime-phase";
import { printRealtime } from "./realtime-report";
import { hasRedisBenchmark, redisDirect } from "./redis-direct";
import { RedisStats } from "./redis-stats";
import { printReport, summarizeResult } from "./report";
import { finishRuntimes, parseRuntimes } from "./runtimes-output";

const { values: args } = parseArgs({
  options: {
    users: { type: "string", default: "100000" },
    concurrency: { type: "string", default: "50" },
    seed: { type: "string", default: "0" },
    probe: { type: "string", default: "2100" },
    rounds: { type: "string", default: "3" },
    rate: { type: "string", default: "0" },
    "naive-pool": { type: "string", default: "10" },
    "hot-row-ms": { type: "string", default: "5000" },
    "direct-requests": { type: "string", default: "100000" },
    skip: { type: "string", default: "" },
    watchers: { type: "string", default: "10,1000,3000" },
    "watch-rate": { type: "string", default: "50" },
    runtimes: { type: "string", default: "workers,deno,bun" },
    "naive-http": { type: "string", default: "native" },
    out: { type: "string", default: join(import.meta.dirname, "output") },
  },
});
const users = Number(args.users);
const concurrency = Number(args.concurrency);
const seed = Number(args.seed);
const probeSize = Number(args.probe);
const skip = new Set(args.skip.split(",").filter(Boolean));
const runtimes = parseRuntimes(args.runtimes);
const log = (line: string) => console.log(line);
const round2 = (v: number) => Math.round(v * 100) / 100;
const loadAtStart = loadavg().map((v) => round2(v));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<number> {
  log(
    `flash-sale bench · seed ${String(seed).padStart(3, "0")} · ${users.toLocaleString("en-US")} users · concurrency ${concurrency}`,
  );
  const env = await startEnvironment(log, { worker: runtimes.workers });
  const load = await LoadClient.start();
  const redis = new RedisStats(env.redisUrl);
  const pg = new PgStats(env.databaseUrl);
  try {
    await pg.open();
    const meter = new Meter(env, redis, pg);
    const result: (BenchResult & { realtime?: RealtimeResult }) | null = runtimes.workers
      ? await benchmark(env, load, meter)
      : null;
    if (result && !skip.has("realtime")) {
      log(`\n[7/7] realtime: ${args.watchers} SSE watchers of one sale while buys take its 1,000 units`);
      result.realtime = await realtimePhase(
        {
          runtime: env.external ? "external" : "workerd",
          baseUrl: env.workerUrl,
          pid: env.pids.workerd,
          redisUrl: env.redisUrl,
          adminToken: env.adminToken,
          jwtSecret: env.jwtSecret,
        },
        {
          watchers: args.watchers.split(",").map(Number),
          rate: Number(args["watch-rate"]),
          quantity: 2,
          pollUpTo: 1_000,
          log,
        },
      );
    }
    await mkdir(args.out, { recursive: true });
    if (result) {
      await writeFile(join(args.out, "latest.json"), `${JSON.stringify(result, null, 2)}\n`);
      await writeFile(join(args.out, "latest.svg"), renderChart(result));
      printReport(result);
      if (result.realtime) printRealtime(result.realtime);
      log(`\nwrote ${join(args.out, "latest.json")} and latest.svg`);
    }
    const opts = { users, concurrency, seed, rate: Number(args.rate), naivePool: Number(args["naive-pool"]) };
    const runtimesOk = await finishRuntimes(
      {
        env,
        load,
        meter,
        ...opts,
        probeSize,
        naiveHttp: args["naive-http"] === "node" ? "node" : "native",
        log,
      },
      runtimes.servers,
      result,
      args.out,
    );
    return (result?.checks.every((c) => c.ok) ?? true) && runtimesOk ? 0 : 1;
  } finally {
    load.stop();
    await redis.close();
    await pg.close().catch(() => undefined);
    await env.stop();
  }
}

async function benchmark(env: BenchEnvironment, load: LoadClient, meter: Meter): Promise<BenchResult> {
  const op = operator(env.workerUrl, env.adminToken);
  const run = Date.now().toString(36);
  const sale = await op.createSale(`seed-000-${run}`, 1_000, 2);
  const open = await op.createSale(`probes-${run}`, Math.max(10_000, probeSize * 10), 2);
  const base = { concurrency, jwtSecret: env.jwtSecret };
  const buyTarget = (token: string) => ({
    baseUrl: env.workerUrl,
    path: `/api/buy/${token}`,
    method: "POST" as const,
  });
  const listRun = (label: string, target: Target, items: ListPlan["items"]) =>
    load.run({ kind: "list", label, target, items, ...base }, { quiet: true });

  let cold: Awaited<ReturnType<typeof coldBurst>> | null = null;
  if (!skip.has("coldburst")) {
    cold = await coldBurst(env.workerUrl, op, { jwtSecret: env.jwtSecret, tag: run });
    log(
      `cold burst: 50 simultaneous buys on a new sale: ${JSON.stringify(cold.result.byStatus)}, ${cold.result.serverErrors} 5xx`,
    );
  }

  log("warming up the isolate (health, Bloom misses, one refused attempt per sale) …");
  await load.run(
    {
      kind: "scenario",
      label: "warm-up",
      target: { ...buyTarget(""), path: "/api/health", method: "GET" },
      users: 500,
      seed: 1,
      tag: `warm-${run}`,
      pauseAtSoldOut: false,
      ...base,
    },
    { quiet: true },
  );
  for (const token of [sale.productToken, open.productToken, "Q".repeat(43)])
    await listRun("warm-up", buyTarget(token), [{ user: `warm-${run}`, quantity: 3, ip: "10.255.0.1" }]);

  // 1. The project, seed-000 crowd, split at the first SOLD_OUT answer.
  log("\n[1/6] project: the seed-000 crowd against the worker");
  const scenario = (label: string, target: ScenarioPlan["target"], tag: string): ScenarioPlan => ({
    kind: "scenario",
    label,
    target,
    users,
    seed,
    tag,
    pauseAtSoldOut: true,
    rate: Number(args.rate),
    ...base,
  });
  const r0 = await meter.read();
  let r1: Reading | null = null;
  let started = 0;
  let drain: Promise<number | null> | null = null;
  const project = await load.run(scenario("project", buyTarget(sale.productToken), `p-${run}`), {
    onStart: () => {
      started = performance.now();
    },
    onPhaseEnd: async (m) => {
      r1 = await meter.read({ pg: false });
      drain = waitForOrders(meter.pg as PgStats, sale.saleId, m.reservedOrders, started);
    },
  });
  const r2 = await meter.read({ pg: false });
  drain ??= waitForOrders(meter.pg as PgStats, sale.saleId, project.reservedOrders, started);
  const drainedAtMs = await drain;
  await sleep(1_500); // Postgres publishes its transaction counters at most once a second per backend
  const r3 = await meter.read();
  const projectPhases = measuredPhases(project, [r0, r1 ?? r2, r2]);
  const pipelineCosts = Meter.costs(r0, r3);

  // 2. Probes, QStash delivery paused so only the buy path runs.
  const probeResults: ProbeResult[] = [];
  let pipelineAlone: BenchResult["pipelineAlone"] = null;
  if (!skip.has("probes")) {
    log(
      `\n[2/6] per-outcome probes (${probeSize.toLocaleString("en-US")} attempts each, QStash delivery paused)`,
    );
    await meter.qstashDelivery(false);
    const rounds = Math.max(1, Number(args.rounds));
    const perRound = Math.ceil(probeSize / rounds);
    const byProbe = new Map<string, { expect: string; runs: { phase: PhaseSummary; costs: Costs }[] }>();
    for (let round = 0; round < rounds; round++) {
      const sales = { baseUrl: env.workerUrl, soldOutToken: sale.productToken, openToken: open.productToken };
      for (const probe of probes(sales, perRound, `pr-${run}-${round}`)) {
        if (probe.prepare) await listRun(`prepare ${probe.name}`, probe.target, probe.prepare);
        const a = await meter.read({ pg: false });
        const label = `${probe.name} (round ${round + 1}/${rounds})`;
        const res = await load.run({
          kind: "list",
          label,
          target: probe.target,
          items: probe.items,
          ...base,
        });
        const b = await meter.read({ pg: false });
        const entry = byProbe.get(probe.name) ?? { expect: probe.expect, runs: [] };
        entry.runs.push({ phase: res.phases[0] as PhaseSummary, costs: Meter.costs(a, b) });
        byProbe.set(probe.name, entry);
      }
    }
    for (const [name, { expect, runs }] of byProbe) {
      const result = combineRounds(name, expect, runs);
      probeResults.push(result);
      log(
        `  ${name}: ${result.phase.attemptsPerSecond}/s, ${Math.round(result.expectedShare * 100)} % ${expect}`,
      );
    }
    const queued = await op.stats(open.saleId);
    log(`  order pipeline alone: resuming QStash delivery for the probes' ${queued.queued} queued orders …`);
    const a = await meter.read();
    await meter.qstashDelivery(true);
    const t = performance.now();
    const drainedMs = await waitForOrders(
      meter.pg as PgStats,
      open.saleId,
      queued.ordersInDb + queued.queued,
      t,
    );
    await sleep(1_500);
    const b = await meter.read();
    pipelineAlone = { orders: queued.queued, drainedMs, costs: Meter.costs(a, b) };
    await waitForQueue(op, open.saleId);
  }

  // 3. The no-op route of the same bundle, same crowd size and connections.
  let noop: BenchResult["noop"] = null;
  if (!skip.has("noop")) {
    log("\n[3/6] no-op route: GET /api/health, same crowd, same bundle, same workerd");
    const a = await meter.read({ pg: false });
    const res = await load.run({
      ...scenario("no-op route", { baseUrl: env.workerUrl, path: "/api/health", method: "GET" }, `n-${run}`),
      pauseAtSoldOut: false,
    });
    const b = await meter.read({ pg: false });
    const costs = Meter.costs(a, b);
    const phase = res.phases[0] as LoadResult["phases"][number];
    noop = { load: withoutOrderIds(res), measured: { phase, costs, per: perAttempt(costs, phase.attempts) } };
  }

  // 4. The naive Postgres approach behind a Node server, same crowd.
  let naive: BenchResult["naive"] = null;
  const serverUrl = env.databaseUrl;
  if (!skip.has("naive")) {
    const pool = Number(args["naive-pool"]);
    log(`\n[4/6] naive baseline: one Postgres transaction per attempt on a hot row (pg pool of ${pool})`);
    const naiveUrl = await prepareNaiveDatabase(serverUrl, 1_000);
    const server = await startNaive(naiveUrl, env.jwtSecret, pool);
    meter.extraPid = server.pid;
    try {
      const a = await meter.read({ pg: false });
      let mid: Reading | null = null;
      const res = await load.run(
        scenario("naive", { baseUrl: server.url, path: "/buy/seed-000", method: "POST" }, `nv-${run}`),
        {
          onPhaseEnd: async () => {
            mid = await meter.read({ pg: false });
          },
        },
      );
      const b = await meter.read({ pg: false });
      const totals = await naiveTotals(naiveUrl);
      naive = {
        pool,
        load: withoutOrderIds(res),
        phases: measuredPhases(res, [a, mid ?? b, b]),
        ...totals,
      };
    } finally {
      meter.extraPid = null;
      await server.stop();
    }
  }

  // 5. Store level: the hot-row transaction straight on Postgres, the script straight on Redis.
  const hotRows: BenchResult["hotRows"] = [];
  if (!skip.has("hotrow")) {
    const seconds = Number(args["hot-row-ms"]) / 1000;
    const sizes = [...new Set([Number(args["naive-pool"]), concurrency])];
    log(`\n[5/6] Postgres hot row, direct: ${sizes.join(" and ")} connections, ${seconds} s each`);
    for (const clients of sizes) {
      const naiveUrl = await prepareNaiveDatabase(serverUrl, 10_000_000);
      const a = await meter.read({ pg: false });
      const res = await runHotRow<HotRowResult>(naiveUrl, clients, Number(args["hot-row-ms"]));
      const b = await meter.read({ pg: false });
      const pgCpu = Meter.costs(a, b).cpu.postgres;
      hotRows.push({
        ...res,
        postgresCpuMicrosPerTx: pgCpu === null ? null : Math.round((pgCpu / res.transactions) * 10) / 10,
      });
    }
  }
  let direct: BenchResult["redisDirect"] = [];
  if (!skip.has("direct")) {
    if (await hasRedisBenchmark()) {
      log(`[6/6] reservation script, direct: redis-benchmark EVALSHA, ${concurrency} clients`);
      direct = await redisDirect(meter.redis, env.redisUrl, {
        clients: concurrency,
        requests: Number(args["direct-requests"]),
      });
    } else
      log("[6/6] redis-benchmark not found: direct Redis baseline skipped (apt-get install redis-tools)");
  }

  // The invariant, from the operator's stats, Postgres and the answers the crowd got.
  const checks: Check[] = await checkInvariant({
    op,
    pg: meter.pg as PgStats,
    sale: { saleId: sale.saleId, stock: 1_000, perUserLimit: 2 },
    open: open.saleId,
    project,
    naive,
  });
  if (cold) checks.push(cold.check);

  const orders = project.reservedOrders;
  const perOrder = (v: number | null | undefined) =>
    v === null || v === undefined || orders === 0 ? null : Math.round((v / orders) * 100) / 100;
  return summarizeResult({
    meta: await meta(env, meter),
    project: {
      load: withoutOrderIds(project),
      phases: projectPhases,
      soldOutAtMs: project.soldOutAtMs,
      drainedAtMs,
      pipeline: {
        orders,
        units: project.reservedUnits,
        costs: pipelineCosts,
        qstashPublishedPerOrder: perOrder(pipelineCosts.qstash?.published),
        qstashDeliveriesPerOrder: perOrder(pipelineCosts.qstash?.attempts),
        pgStatementsPerOrder: perOrder(pipelineCosts.pg?.statements),
        pgTransactionsPerOrder: perOrder(pipelineCosts.pg?.transactions),
        workerCpuMicrosPerOrder: null,
      },
    },
    probes: probeResults,
    pipelineAlone,
    noop,
    naive,
    hotRows,
    redisDirect: direct,
    capacity: {},
    ratios: {},
    goals: [],
    checks,
    ...(cold ? { coldBurst: cold.result } : {}),
  });
}

/**
 * One probe's rounds: commands and CPU are summed (the JSON keeps the totals), the per-attempt figures
 * are the median round's (a burst of other work on the machine moves one round, not the median), and
 * the latency shown is the round with the median throughput.
 */
function combineRounds(
  name: string,
  expect: string,
  runs: { phase: PhaseSummary; costs: Costs }[],
): ProbeResult {
  const pers = runs.map((r) => perAttempt(r.costs, r.phase.attempts));
  const median = (pick: (p: PerAttempt) => number | null): number | null => {
    const values = pers
      .map(pick)
      .filter((v): v is number => v !== null)
      .sort((x, y) => x - y);
    return values.length ? (values[Math.floor(values.length / 2)] as number) : null;
  };
  const per: PerAttempt = {
    attempts: runs.reduce((n, r) => n + r.phase.attempts, 0),
    scripts: median((p) => p.scripts) ?? 0,
    otherCommands: median((p) => p.otherCommands) ?? 0,
    scriptMicros: median((p) => p.scriptMicros) ?? 0,
    otherMicros: median((p) => p.otherMicros) ?? 0,
    redisCpuMicros: median((p) => p.redisCpuMicros) ?? 0,
    workerCpuMicros: median((p) => p.workerCpuMicros),
    standInsCpuMicros: median((p) => p.standInsCpuMicros),
    postgresCpuMicros: median((p) => p.postgresCpuMicros),
    extraCpuMicros: median((p) => p.extraCpuMicros),
  };
  const byRate = [...runs].sort((x, y) => x.phase.attemptsPerSecond - y.phase.attemptsPerSecond);
  const expected = runs.reduce((n, r) => n + (r.phase.byOutcome[expect]?.count ?? 0), 0);
  return {
    name,
    expect,
    expectedShare: expected / Math.max(1, per.attempts),
    phase: (byRate[Math.floor(byRate.length / 2)] as (typeof runs)[number]).phase,
    costs: runs.map((r) => r.costs).reduce(addCosts),
    per,
    rounds: runs.map((r, i) => ({
      attemptsPerSecond: r.phase.attemptsPerSecond,
      per: pers[i] as PerAttempt,
    })),
  };
}

function addCosts(a: Costs, b: Costs): Costs {
  const other: Costs["redis"]["other"] = { ...a.redis.other };
  for (const [k, v] of Object.entries(b.redis.other)) {
    const was = other[k] ?? { calls: 0, usec: 0 };
    other[k] = { calls: was.calls + v.calls, usec: was.usec + v.usec };
  }
  const sum = (x: number | null, y: number | null) => (x === null || y === null ? null : x + y);
  return {
    ms: a.ms + b.ms,
    redis: {
      scripts: {
        calls: a.redis.scripts.calls + b.redis.scripts.calls,
        usec: a.redis.scripts.usec + b.redis.scripts.usec,
      },
      other,
      otherCalls: a.redis.otherCalls + b.redis.otherCalls,
      otherUsec: a.redis.otherUsec + b.redis.otherUsec,
      cpuMicros: a.redis.cpuMicros + b.redis.cpuMicros,
    },
    pg: null,
    qstash:
      a.qstash && b.qstash
        ? {
            published: a.qstash.published + b.qstash.published,
            attempts: a.qstash.attempts + b.qstash.attempts,
            delivered: a.qstash.delivered + b.qstash.delivered,
            retries: a.qstash.retries + b.qstash.retries,
            failed: a.qstash.failed + b.qstash.failed,
          }
        : null,
    cpu: {
      workerd: sum(a.cpu.workerd, b.cpu.workerd),
      standIns: sum(a.cpu.standIns, b.cpu.standIns),
      postgres: sum(a.cpu.postgres, b.cpu.postgres),
      extra: sum(a.cpu.extra, b.cpu.extra),
    },
  };
}

/** Phase summaries with the costs between consecutive readings (rush: r0→r1, after: r1→r2). */
function measuredPhases(result: LoadResult, readings: [Reading, Reading, Reading]): Measured[] {
  return result.phases.map((phase, i) => {
    const costs = Meter.costs(readings[i] as Reading, readings[i + 1] as Reading);
    return { phase, costs, per: perAttempt(costs, phase.attempts) };
  });
}

/** Polls Postgres until `expected` orders of the sale are there; ms since `started`, or null (timeout). */
async function waitForOrders(
  pg: PgStats,
  saleId: string,
  expected: number,
  started: number,
): Promise<number | null> {
  const deadline = performance.now() + 180_000;
  while (performance.now() < deadline) {
    const [row] = await pg.query<{ n: number }>("select count(*)::int as n from orders where sale_id = $1", [
      saleId,
    ]);
    if ((row?.n ?? 0) >= expected) return Math.round(performance.now() - started);
    await sleep(100);
  }
  return null;
}

/** Polls the operator's stats until no order of the sale is queued (the pipeline drained it). */
async function waitForQueue(op: ReturnType<typeof operator>, saleId: string): Promise<void> {
  const deadline = performance.now() + 180_000;
  while (performance.now() < deadline && (await op.stats(saleId)).queued > 0) await sleep(250);
}

async function naiveTotals(naiveUrl: string): Promise<{ units: number; orders: number; stockLeft: number }> {
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

async function meta(env: BenchEnvironment, meter: Meter): Promise<Meta> {
  const info = await meter.redis.client.info("server");
  const pg = meter.pg as PgStats;
  return {
    date: new Date().toISOString(),
    loadAverage: { atStart: loadAtStart, atEnd: loadavg().map((v) => round2(v)) },
    command: `npm run bench -- ${process.argv.slice(2).join(" ")}`.trim(),
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model ?? "?",
      memoryGb: Math.round(totalmem() / 2 ** 30),
    },
    node: process.version,
    redis: /redis_version:(\S+)/.exec(info)?.[1] ?? "?",
    postgres: {
      version: await pg.setting("server_version"),
      fsync: await pg.setting("fsync"),
      synchronousCommit: await pg.setting("synchronous_commit"),
      statements: pg.statementsAvailable ? "pg_stat_statements" : "pg_stat_database only",
    },
    worker: env.external
      ? `running stack at ${env.workerUrl}`
      : "built bundle (wrangler deploy --dry-run) in workerd through Miniflare; no wrangler dev proxy",
    users,
    concurrency,
    rate: Number(args.rate),
    seed,
    probeSize,
    limits: Object.fromEntries(
      Object.entries(env.vars).filter(([k]) => k.startsWith("RATE_LIMIT") || k === "SOLD_OUT_CACHE_MS"),
    ),
    pids: env.pids,
  };
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
