/**
 * Phases 3 to 6 of the worker's bench, what the project is compared with in the same run: the no-op
 * route of the same bundle, the naive Postgres server, the hot-row transaction straight on Postgres and
 * the reservation script straight on redis-server.
 *
 * @example
 * const noop = await noopPhase(bench);
 * const naive = await naivePhase(bench);
 */
import { runHotRow, startNaive } from "../baselines/children";
import { naiveTotals, prepareNaiveDatabase } from "../baselines/naive-db";
import type { HotRowResult } from "../baselines/pg-hot-row";
import { hasRedisBenchmark, redisDirect } from "../baselines/redis-direct";
import type { LoadResult } from "../clients/protocol";
import type { BenchResult } from "../measure/measures";
import { perAttempt, withoutOrderIds } from "../measure/measures";
import { Meter, type Reading } from "../measure/meter";
import { measuredPhases } from "./project-phase";
import { crowd, type WorkersBench } from "./workers-bench";

/** Phase 3: `GET /api/health` of the same bundle, the same crowd size and connections. */
export async function noopPhase(bench: WorkersBench): Promise<NonNullable<BenchResult["noop"]>> {
  const { env, load, meter, run, log } = bench;
  log("\n[3/6] no-op route: GET /api/health, same crowd, same bundle, same workerd");
  const a = await meter.read({ pg: false });
  const res = await load.run({
    ...crowd(
      bench,
      "no-op route",
      { baseUrl: env.workerUrl, path: "/api/health", method: "GET" },
      `n-${run}`,
    ),
    pauseAtSoldOut: false,
  });
  const b = await meter.read({ pg: false });
  const costs = Meter.costs(a, b);
  const phase = res.phases[0] as LoadResult["phases"][number];
  return { load: withoutOrderIds(res), measured: { phase, costs, per: perAttempt(costs, phase.attempts) } };
}

/** Phase 4: one Postgres transaction per attempt on a hot row, behind a Node server, the same crowd. */
export async function naivePhase(bench: WorkersBench): Promise<NonNullable<BenchResult["naive"]>> {
  const { env, load, meter, run, log } = bench;
  const pool = bench.options.naivePool;
  log(`\n[4/6] naive baseline: one Postgres transaction per attempt on a hot row (pg pool of ${pool})`);
  const naiveUrl = await prepareNaiveDatabase(env.databaseUrl, 1_000);
  const server = await startNaive(naiveUrl, env.jwtSecret, pool);
  meter.extraPid = server.pid;
  try {
    const a = await meter.read({ pg: false });
    let mid: Reading | null = null;
    const res = await load.run(
      crowd(bench, "naive", { baseUrl: server.url, path: "/buy/seed-000", method: "POST" }, `nv-${run}`),
      {
        onPhaseEnd: async () => {
          mid = await meter.read({ pg: false });
        },
      },
    );
    const b = await meter.read({ pg: false });
    const totals = await naiveTotals(naiveUrl);
    return { pool, load: withoutOrderIds(res), phases: measuredPhases(res, [a, mid ?? b, b]), ...totals };
  } finally {
    meter.extraPid = null;
    await server.stop();
  }
}

/** Phase 5: the hot-row transaction straight on Postgres, at the naive pool size and at `--concurrency`. */
export async function hotRowPhase(bench: WorkersBench): Promise<BenchResult["hotRows"]> {
  const { env, meter, options, log } = bench;
  const seconds = options.hotRowMs / 1000;
  const sizes = [...new Set([options.naivePool, options.concurrency])];
  log(`\n[5/6] Postgres hot row, direct: ${sizes.join(" and ")} connections, ${seconds} s each`);
  const hotRows: BenchResult["hotRows"] = [];
  for (const clients of sizes) {
    const naiveUrl = await prepareNaiveDatabase(env.databaseUrl, 10_000_000);
    const a = await meter.read({ pg: false });
    const res = await runHotRow<HotRowResult>(naiveUrl, clients, options.hotRowMs);
    const b = await meter.read({ pg: false });
    const pgCpu = Meter.costs(a, b).cpu.postgres;
    hotRows.push({
      ...res,
      postgresCpuMicrosPerTx: pgCpu === null ? null : Math.round((pgCpu / res.transactions) * 10) / 10,
    });
  }
  return hotRows;
}

/** Phase 6: lua/reserve-stock.lua straight on redis-server with redis-benchmark (skipped without it). */
export async function redisDirectPhase(bench: WorkersBench): Promise<BenchResult["redisDirect"]> {
  const { env, meter, options, log } = bench;
  if (!(await hasRedisBenchmark())) {
    log("[6/6] redis-benchmark not found: direct Redis baseline skipped (apt-get install redis-tools)");
    return [];
  }
  log(`[6/6] reservation script, direct: redis-benchmark EVALSHA, ${options.concurrency} clients`);
  return redisDirect(meter.redis, env.redisUrl, {
    clients: options.concurrency,
    requests: options.directRequests,
  });
}
