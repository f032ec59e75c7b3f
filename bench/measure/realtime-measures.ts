/** The realtime phase's record (phases/realtime-phase.ts): the engine, one row per watcher count. */
import type { LatencySummary } from "../clients/protocol";

export type RealtimeTarget = {
  runtime: string;
  baseUrl: string;
  /** The process serving `baseUrl` (workerd, deno, bun), for RSS; null: memory not measured. */
  pid: number | null;
  redisUrl: string;
  adminToken: string;
  jwtSecret: string;
};

export type RealtimeRow = {
  runtime: string;
  watchers: number;
  /** Watchers that got their first event (the rest: `statuses`). */
  open: number;
  statuses: Record<string, number>;
  connectMs: number;
  rssBeforeMb: number | null;
  rssAfterMb: number | null;
  kbPerWatcher: number | null;
  latency: LatencySummary;
  /** (buy, watcher) pairs whose change never reached the watcher. */
  missed: number;
  buys: Record<string, number>;
  buySeconds: number;
  /** Every command redis-server ran per second (a script's inner commands included). */
  idleCommandsPerSecond: number;
  rushCommandsPerSecond: number;
  polling: {
    /** The same shoppers' pages polling GET /api/sales/:id every 2 s: requests/s and Redis commands/s. */
    requestsPerSecond: number;
    estimatedCommandsPerSecond: number;
    measured: { requestsPerSecond: number; commandsPerSecond: number } | null;
    /** Redis commands per GET of this runtime's largest polling run (what the estimate multiplies). */
    commandsPerGet: number;
  };
  /** The engine process's CPU (utime + stime) while buying, in % of one core; null: not measured. */
  engineCpuPercent: number | null;
  /** The watchers' and buyers' client process, the same way (it shares the machine's cores). */
  clientCpuPercent: number;
};

export type RealtimeResult = {
  rate: number;
  quantity: number;
  /** Redis commands per polling GET in the largest polling run (for the rows too large to poll here). */
  commandsPerGet: number;
  rows: RealtimeRow[];
};
