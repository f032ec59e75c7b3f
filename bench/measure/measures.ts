/** Per-attempt figures from a measured interval, and the result record the report and chart read. */

import type { HotRowResult } from "../baselines/pg-hot-row";
import type { DirectRun } from "../baselines/redis-direct";
import type { LoadFigures, LoadResult, PhaseSummary } from "../clients/protocol";
import type { Costs } from "./meter";

export type PerAttempt = {
  attempts: number;
  /** EVALSHA/EVAL per attempt: the commands a client sends for scripts (one round trip each). */
  scripts: number;
  /** Other commands per attempt: sent outside scripts or run inside them (Redis counts both). */
  otherCommands: number;
  /** µs Redis spent executing scripts (their inner commands included) and other commands. */
  scriptMicros: number;
  otherMicros: number;
  /** redis-server process CPU per attempt (execution, networking, parsing). */
  redisCpuMicros: number;
  workerCpuMicros: number | null;
  /** The local stand-ins in the bench's own process; null against a running stack (they run elsewhere). */
  standInsCpuMicros: number | null;
  postgresCpuMicros: number | null;
  extraCpuMicros: number | null;
};

const per = (v: number, n: number, digits = 2) =>
  n > 0 ? Math.round((v / n) * 10 ** digits) / 10 ** digits : 0;
const perOrNull = (v: number | null, n: number) => (v === null ? null : per(v, n, 1));

export function perAttempt(costs: Costs, attempts: number): PerAttempt {
  return {
    attempts,
    scripts: per(costs.redis.scripts.calls, attempts, 3),
    otherCommands: per(costs.redis.otherCalls, attempts, 2),
    scriptMicros: per(costs.redis.scripts.usec, attempts, 2),
    otherMicros: per(costs.redis.otherUsec, attempts, 2),
    redisCpuMicros: per(costs.redis.cpuMicros, attempts, 1),
    workerCpuMicros: perOrNull(costs.cpu.workerd, attempts),
    standInsCpuMicros: perOrNull(costs.cpu.standIns, attempts),
    postgresCpuMicros: perOrNull(costs.cpu.postgres, attempts),
    extraCpuMicros: perOrNull(costs.cpu.extra, attempts),
  };
}

export type Measured = { phase: PhaseSummary; costs: Costs; per: PerAttempt };

export type ProbeResult = Measured & {
  name: string;
  expect: string;
  expectedShare: number;
  /** Each round's throughput and per-attempt figures (`per` holds their medians). */
  rounds: { attemptsPerSecond: number; per: PerAttempt }[];
};

export type Check = { name: string; ok: boolean; detail: string };

/** The cold burst's answers (bench/phases/cold-burst.ts): status counts of 50 simultaneous buys, 5xx among them. */
export type ColdBurstResult = { shoppers: number; byStatus: Record<string, number>; serverErrors: number };

export type Goal = { goal: string; measured: string; met: boolean };

export type Meta = {
  date: string;
  /** 1, 5 and 15 minute load averages: how busy the machine was with other work. */
  loadAverage: { atStart: number[]; atEnd: number[] };
  command: string;
  machine: { cpus: number; model: string; memoryGb: number };
  node: string;
  redis: string;
  postgres: { version: string; fsync: string; synchronousCommit: string; statements: string };
  worker: string;
  users: number;
  concurrency: number;
  /** Open-loop arrival rate of the crowd runs, per second; 0 = closed loop. */
  rate: number;
  seed: number;
  probeSize: number;
  limits: Record<string, string>;
  pids: Record<string, number | null>;
};

export type BenchResult = {
  meta: Meta;
  project: {
    load: LoadFigures;
    phases: Measured[];
    soldOutAtMs: number | null;
    /** ms from the first request until every reserved order was in Postgres. */
    drainedAtMs: number | null;
    pipeline: {
      orders: number;
      units: number;
      costs: Costs;
      qstashPublishedPerOrder: number | null;
      qstashDeliveriesPerOrder: number | null;
      pgStatementsPerOrder: number | null;
      pgTransactionsPerOrder: number | null;
      workerCpuMicrosPerOrder: number | null;
    };
  };
  probes: ProbeResult[];
  /** The order pipeline measured with nothing else running: the probes' queued orders, delivered at once. */
  pipelineAlone: { orders: number; drainedMs: number | null; costs: Costs } | null;
  noop: { load: LoadFigures; measured: Measured } | null;
  naive: {
    pool: number;
    load: LoadFigures;
    phases: Measured[];
    units: number;
    orders: number;
    stockLeft: number;
  } | null;
  /** The hot-row transaction straight on Postgres, at the naive server's pool size and at the bench's concurrency. */
  hotRows: (HotRowResult & { postgresCpuMicrosPerTx: number | null })[];
  redisDirect: DirectRun[];
  capacity: Record<string, number | null>;
  ratios: Record<string, number | null>;
  goals: Goal[];
  checks: Check[];
  /** 50 simultaneous buys into a cold catalog (bench/phases/cold-burst.ts), before the warm-up. */
  coldBurst?: ColdBurstResult;
};

export function withoutOrderIds(result: LoadResult): LoadFigures {
  const { orderIds: _ids, orderAttempts: _attempts, ...rest } = result;
  return rest;
}
