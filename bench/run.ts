/**
 * `npm run bench`: the seed-000 flash sale (1,000 units, limit 2, 100,000 shoppers) against the worker
 * in workerd, per-outcome probes, and the baselines in the same run (a no-op route in the same bundle,
 * the naive Postgres hot row behind a Node server, the reservation script straight on redis-server,
 * the hot-row transaction straight on Postgres). Prints a table, writes bench/output/latest.json and
 * latest.svg, and exits non-zero when the invariant does not hold. Then the per-path rows with wrk for
 * every runtime (bench/phases/floor-runtimes.ts, `--skip floor` leaves them out), the shopper floods, the
 * operator figures by size and the waiting room's waiters and crowd on Bun (bench/room.ts, `--skip
 * roomwaiters,roomcrowd`), and the drops on the worker: a one-line buy's CPU against a single-variant sale
 * and the drop crowd of 100,000 carts (bench/drop-crowd.ts, `--skip dropcost,drop`). See bench/README.md.
 *
 * @example
 * npm run bench                                  # 100,000 users, 50 connections
 * npm run bench -- --users 5000 --probe 500      # a quick run while developing
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { LoadClient } from "./clients/load-client";
import { dropPhases } from "./drop-crowd";
import { checkInvariant } from "./measure/checks";
import type { BenchResult } from "./measure/measures";
import { Meter } from "./measure/meter";
import { PgStats } from "./measure/pg-stats";
import { RedisStats } from "./measure/redis-stats";
import { loadAverage, runMeta } from "./measure/run-meta";
import { operatorScalePhase, SCALE_DEFAULTS } from "./operator-scale";
import { hotRowPhase, naivePhase, noopPhase, redisDirectPhase } from "./phases/baseline-phases";
import { coldBurstPhase } from "./phases/cold-burst";
import { floorRuntimes } from "./phases/floor-runtimes";
import { pipelineAlonePhase, probePhase } from "./phases/probe-phase";
import { projectFigures, projectPhase, warmUp } from "./phases/project-phase";
import { type RealtimeResult, realtimePhase } from "./phases/realtime-phase";
import { finishRuntimes, parseRuntimes } from "./phases/runtimes-output";
import { printFanout, webhookFanoutPhase } from "./phases/webhook-fanout";
import { type WorkersBench, type WorkersOptions, workersBench } from "./phases/workers-bench";
import { renderChart } from "./report/chart";
import { printRealtime } from "./report/realtime-report";
import { printReport } from "./report/report";
import { summarizeResult } from "./report/summary";
import { roomPhases } from "./room";
import { startEnvironment } from "./setup/environment";
import { floodPhase } from "./shopper-flood";

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
    "floor-seconds": { type: "string", default: "8" },
    "floor-tokens": { type: "string", default: "300000" },
    "scale-sizes": { type: "string", default: SCALE_DEFAULTS.sizes },
    "room-waiters": { type: "string", default: "10,1000,10000" },
    "room-shoppers": { type: "string", default: "100000" },
    "drop-shoppers": { type: "string", default: "100000" },
    "drop-window": { type: "string", default: "60" },
    out: { type: "string", default: join(import.meta.dirname, "output") },
  },
});
const options: WorkersOptions = {
  users: Number(args.users),
  concurrency: Number(args.concurrency),
  seed: Number(args.seed),
  rate: Number(args.rate),
  probeSize: Number(args.probe),
  rounds: Number(args.rounds),
  naivePool: Number(args["naive-pool"]),
  hotRowMs: Number(args["hot-row-ms"]),
  directRequests: Number(args["direct-requests"]),
};
const skip = new Set(args.skip.split(",").filter(Boolean));
const runtimes = parseRuntimes(args.runtimes);
const log = (line: string) => console.log(line);
const loadAtStart = loadAverage();

async function main(): Promise<number> {
  log(
    `flash-sale bench · seed ${String(options.seed).padStart(3, "0")} · ${options.users.toLocaleString("en-US")} users · concurrency ${options.concurrency}`,
  );
  const env = await startEnvironment(log, { worker: runtimes.workers });
  const load = await LoadClient.start();
  const redis = new RedisStats(env.redisUrl);
  const pg = new PgStats(env.databaseUrl);
  try {
    await pg.open();
    const meter = new Meter(env, redis, pg);
    const bench = runtimes.workers ? await workersBench({ env, load, meter, options, log }) : null;
    const result: (BenchResult & { realtime?: RealtimeResult }) | null = bench
      ? await benchmark(bench)
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
    let dropOk = true;
    if (bench && (!skip.has("drop") || !skip.has("dropcost"))) {
      log("\ndrops: a one-line buy against a single-variant sale, then the drop crowd (bench/drop-crowd.ts)");
      dropOk = await dropPhases(bench, {
        shoppers: Number(args["drop-shoppers"]),
        units: 100,
        paymentWindowSeconds: Number(args["drop-window"]),
        costRounds: 9,
        costCalls: 1_000,
        skip: new Set([...(skip.has("drop") ? ["crowd"] : []), ...(skip.has("dropcost") ? ["cost"] : [])]),
        out: args.out,
      });
    }
    await mkdir(args.out, { recursive: true });
    if (result) {
      await writeFile(join(args.out, "latest.json"), `${JSON.stringify(result, null, 2)}\n`);
      await writeFile(join(args.out, "latest.svg"), renderChart(result));
      printReport(result);
      if (result.realtime) printRealtime(result.realtime);
      log(`\nwrote ${join(args.out, "latest.json")} and latest.svg`);
    }
    const runtimesOk = await finishRuntimes(
      { env, load, meter, ...options, naiveHttp: args["naive-http"] === "node" ? "node" : "native", log },
      runtimes.servers,
      result,
      args.out,
    );
    if (!skip.has("floor")) {
      const floor = await floorRuntimes(
        env,
        runtimes,
        {
          seconds: Number(args["floor-seconds"]),
          connections: options.concurrency,
          tokens: Number(args["floor-tokens"]),
          out: args.out,
        },
        log,
      );
      await writeFile(
        join(args.out, "latest-floor.json"),
        `${JSON.stringify({ loadAverage: loadAverage(), ...floor }, null, 2)}\n`,
      );
    }
    if (!skip.has("webhooks")) {
      log(
        "\nwebhook fan-out: in-stock buys with 0, 1 and 3 endpoints, QStash delivering throughout, on Bun (bench/webhook-fanout.ts --steady)",
      );
      const fanout = await webhookFanoutPhase(env, {
        runtime: "bun",
        endpoints: [0, 1, 3],
        steady: true,
        seconds: Number(args["floor-seconds"]),
        connections: options.concurrency,
        tokens: Number(args["floor-tokens"]),
        out: args.out,
        log,
      });
      printFanout(fanout, log);
      await writeFile(
        join(args.out, "latest-webhooks.json"),
        `${JSON.stringify({ loadAverage: loadAverage(), rows: fanout }, null, 2)}\n`,
      );
    }
    if (!skip.has("flood")) {
      log(
        "\nshopper floods: one token and one address on each shopper route, on Bun (bench/shopper-flood.ts)",
      );
      await floodPhase(env, { runtime: "bun", seconds: 3, connections: 20, buyRate: 50, out: args.out, log });
    }
    if (!skip.has("operatorscale")) {
      log(
        "\noperator figures by sale size: stats, reconcile, the operator stream, on Bun (bench/operator-scale.ts)",
      );
      const scale = await operatorScalePhase(env, {
        runtime: "bun",
        sizes: args["scale-sizes"].split(",").map(Number),
        fullUpTo: Number(SCALE_DEFAULTS.fullUpTo),
        streamSeconds: Number(SCALE_DEFAULTS.streamSeconds),
        out: args.out,
        log,
      });
      if (scale.some((r) => !r.invariantHolds)) return 1;
    }
    let roomOk = true;
    if (!skip.has("roomwaiters") || !skip.has("roomcrowd")) {
      const room = await roomPhases(env, {
        runtime: "bun",
        waiters: args["room-waiters"].split(",").map(Number),
        users: Number(args["room-shoppers"]),
        rate: 4,
        changes: 20,
        connections: 32,
        skip: new Set([
          ...(skip.has("roomwaiters") ? ["waiters"] : []),
          ...(skip.has("roomcrowd") ? ["crowd"] : []),
        ]),
        out: args.out,
        log,
      });
      roomOk = (room.crowd?.violations.length ?? 0) === 0 && room.waiters.every((w) => w.frontierBack === 0);
    }
    return (result?.checks.every((c) => c.ok) ?? true) && runtimesOk && roomOk && dropOk ? 0 : 1;
  } finally {
    load.stop();
    await redis.close();
    await pg.close().catch(() => undefined);
    await env.stop();
  }
}

/**
 * The worker's rows, phase after phase (bench/README.md, "What runs"); `--skip` leaves phases out. The
 * invariant is checked from the operator's stats, Postgres and the answers the crowd got.
 */
async function benchmark(bench: WorkersBench): Promise<BenchResult> {
  const { env, meter } = bench;
  const cold = skip.has("coldburst") ? null : await coldBurstPhase(bench);
  await warmUp(bench);
  const project = await projectPhase(bench);
  const probes = skip.has("probes") ? [] : await probePhase(bench);
  const pipelineAlone = skip.has("probes") ? null : await pipelineAlonePhase(bench);
  const noop = skip.has("noop") ? null : await noopPhase(bench);
  const naive = skip.has("naive") ? null : await naivePhase(bench);
  const hotRows = skip.has("hotrow") ? [] : await hotRowPhase(bench);
  const redisDirect = skip.has("direct") ? [] : await redisDirectPhase(bench);

  const checks = await checkInvariant({
    op: bench.op,
    pg: meter.pg as PgStats,
    sale: { saleId: bench.sale.saleId, stock: 1_000, perUserLimit: 2 },
    open: bench.open.saleId,
    project: project.load,
    naive,
  });
  if (cold) checks.push(cold.check);
  return summarizeResult({
    meta: await runMeta(env, meter, options, loadAtStart),
    project: projectFigures(project),
    probes,
    pipelineAlone,
    noop,
    naive,
    hotRows,
    redisDirect,
    capacity: {},
    ratios: {},
    goals: [],
    checks,
    ...(cold ? { coldBurst: cold.result } : {}),
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
