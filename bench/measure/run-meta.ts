/** The record of how a `npm run bench` ran: the machine, the versions, the command line, the limits. */
import { cpus, loadavg, totalmem } from "node:os";
import type { WorkersOptions } from "../phases/workers-bench";
import type { BenchEnvironment } from "../setup/environment";
import type { Meta } from "./measures";
import type { Meter } from "./meter";
import type { PgStats } from "./pg-stats";

/** The 1, 5 and 15 minute load averages, to two decimals. */
export const loadAverage = () => loadavg().map((v) => Math.round(v * 100) / 100);

/** The run's meta record; `loadAtStart` is {@link loadAverage} as the bench started. */
export async function runMeta(
  env: BenchEnvironment,
  meter: Meter,
  options: WorkersOptions,
  loadAtStart: number[],
): Promise<Meta> {
  const info = await meter.redis.client.info("server");
  const pg = meter.pg as PgStats;
  return {
    date: new Date().toISOString(),
    loadAverage: { atStart: loadAtStart, atEnd: loadAverage() },
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
    users: options.users,
    concurrency: options.concurrency,
    rate: options.rate,
    seed: options.seed,
    probeSize: options.probeSize,
    limits: Object.fromEntries(
      Object.entries(env.vars).filter(([k]) => k.startsWith("RATE_LIMIT") || k === "SOLD_OUT_CACHE_MS"),
    ),
    pids: env.pids,
  };
}
