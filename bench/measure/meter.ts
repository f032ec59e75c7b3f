/**
 * One reading of every counter the bench compares, and the difference between two readings: Redis
 * commandstats and CPU, Postgres statements and transactions, QStash message counters, and the CPU time
 * of the processes involved (workerd, the local stand-ins in this process, Postgres, the naive server).
 */
import type { BenchEnvironment } from "../setup/environment";
import { type PgDelta, type PgSnapshot, PgStats } from "./pg-stats";
import { threadCpuMicros, treeCpuMicros } from "./proc";
import { type RedisDelta, type RedisSnapshot, RedisStats } from "./redis-stats";

type QStashCounters = {
  published: number;
  attempts: number;
  delivered: number;
  retries: number;
  failed: number;
};

export type Reading = {
  at: number;
  redis: RedisSnapshot;
  pg: PgSnapshot | null;
  qstash: QStashCounters | null;
  workerd: number | null;
  postgres: number | null;
  standIns: number | null;
  extra: number | null;
};

export type Costs = {
  ms: number;
  redis: RedisDelta;
  pg: PgDelta | null;
  qstash: QStashCounters | null;
  /** CPU µs over the interval. */
  cpu: { workerd: number | null; standIns: number | null; postgres: number | null; extra: number | null };
};

export class Meter {
  /** A process to watch besides the usual ones (the naive server while it runs). */
  extraPid: number | null = null;

  constructor(
    private readonly env: BenchEnvironment,
    readonly redis: RedisStats,
    readonly pg: PgStats | null,
  ) {}

  async read(options: { pg?: boolean } = {}): Promise<Reading> {
    const [redis, pg, qstash] = await Promise.all([
      this.redis.snapshot(),
      options.pg === false || !this.pg ? Promise.resolve(null) : this.pg.snapshot(),
      this.qstashCounters(),
    ]);
    const own = process.cpuUsage();
    return {
      at: performance.now(),
      redis,
      pg,
      qstash,
      workerd: this.env.pids.workerd ? threadCpuMicros(this.env.pids.workerd) : null,
      postgres: this.env.pids.postgres ? treeCpuMicros(this.env.pids.postgres) : null,
      standIns: this.env.external ? null : own.user + own.system,
      extra: this.extraPid ? threadCpuMicros(this.extraPid) : null,
    };
  }

  static costs(a: Reading, b: Reading): Costs {
    const d = (x: number | null, y: number | null) => (x === null || y === null ? null : y - x);
    return {
      ms: Math.round(b.at - a.at),
      redis: RedisStats.delta(a.redis, b.redis),
      pg: a.pg && b.pg ? PgStats.delta(a.pg, b.pg) : null,
      qstash:
        a.qstash && b.qstash
          ? {
              published: b.qstash.published - a.qstash.published,
              attempts: b.qstash.attempts - a.qstash.attempts,
              delivered: b.qstash.delivered - a.qstash.delivered,
              retries: b.qstash.retries - a.qstash.retries,
              failed: b.qstash.failed - a.qstash.failed,
            }
          : null,
      cpu: {
        workerd: d(a.workerd, b.workerd),
        standIns: d(a.standIns, b.standIns),
        postgres: d(a.postgres, b.postgres),
        extra: d(a.extra, b.extra),
      },
    };
  }

  /** Pauses or resumes QStash delivery (the local server's control route). */
  async qstashDelivery(on: boolean): Promise<void> {
    await this.qstashCall("POST", on ? "/__local/resume" : "/__local/pause");
  }

  private async qstashCounters(): Promise<QStashCounters | null> {
    const state = (await this.qstashCall("GET", "/__local/state").catch(() => null)) as {
      counters?: QStashCounters;
    } | null;
    return state?.counters ?? null;
  }

  private async qstashCall(method: string, path: string): Promise<unknown> {
    const res = await fetch(`${this.env.qstashUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.env.qstashToken}` },
    });
    if (!res.ok) throw new Error(`QStash ${method} ${path}: ${res.status}`);
    return res.json();
  }
}
