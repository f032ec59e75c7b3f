/**
 * The per-outcome probes run in interleaved rounds with fresh users (bench/phases/probe-phase.ts); this turns
 * one probe's rounds into its figures.
 */

import type { PhaseSummary } from "../clients/protocol";
import { type PerAttempt, type ProbeResult, perAttempt } from "../measure/measures";
import type { Costs } from "../measure/meter";

/** One round of one probe: its load phase and what it cost. */
export type ProbeRound = { phase: PhaseSummary; costs: Costs };

/**
 * One probe's rounds: commands and CPU are summed (the JSON keeps the totals), the per-attempt figures
 * are the median round's (a burst of other work on the machine moves one round, not the median), and
 * the latency shown is the round with the median throughput.
 */
export function combineRounds(name: string, expect: string, runs: ProbeRound[]): ProbeResult {
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

export function addCosts(a: Costs, b: Costs): Costs {
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
