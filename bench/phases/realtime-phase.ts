/**
 * The realtime phase: N SSE watchers on one sale (`GET /api/sales/:id/events`) while buys take its 1,000
 * units at a steady rate. Per watcher count: push latency from each 202 to each watcher's first event
 * showing that remaining (p50/p99 over watchers × changes), Redis commands per second (INFO commandstats
 * delta, idle with the watchers connected and during the buys), the engine's memory per watcher (RSS of
 * its process before and after connecting), and what polling pages (GET /api/sales/:id every 2 s) would
 * cost the stores for the same shoppers. The engine is named by its base URL and pid only, so another
 * runtime's server can be measured the same way. Run by `bench/run.ts` and alone by `bench/realtime.ts`.
 */
import { type ChildProcess, fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { operator } from "../clients/admin";
import type { LatencySummary } from "../clients/protocol";
import type { ToRealtimeLoad } from "../clients/realtime-load";
import { cpuMicros } from "../measure/proc";
import { RedisStats } from "../measure/redis-stats";

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

const POLL_EVERY_MS = 2_000;
/** Watchers of a closed stream keep a lease this long (src/realtime/stream-slots.ts: 6 s). */
const SETTLE_MS = 7_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (v: number, digits = 1) => Math.round(v * 10 ** digits) / 10 ** digits;

function rssMb(pid: number | null): number | null {
  if (!pid) return null;
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb ? round(Number(kb) / 1024) : null;
  } catch {
    return null;
  }
}

/** The forked client process: one request/answer pair per message. */
class Clients {
  private constructor(private readonly child: ChildProcess) {}
  get pid(): number {
    return this.child.pid ?? 0;
  }
  static async start(): Promise<Clients> {
    const child = fork(join(import.meta.dirname, "..", "clients", "realtime-load.ts"), [], {
      execArgv: ["--import", "tsx", "--max-old-space-size=2048"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    await new Promise((resolve, reject) => {
      child.once("message", resolve);
      child.once("exit", (code) => reject(new Error(`realtime clients exited (${code})`)));
    });
    child.removeAllListeners("exit");
    return new Clients(child);
  }
  ask<T>(m: ToRealtimeLoad): Promise<T> {
    return new Promise((resolve, reject) => {
      this.child.once("message", (r: { type: string; message?: string }) =>
        r.type === "error" ? reject(new Error(r.message)) : resolve(r as T),
      );
      this.child.send(m);
    });
  }
  stop(): void {
    if (this.child.exitCode === null) this.child.kill();
  }
}

export async function realtimePhase(
  t: RealtimeTarget,
  o: { watchers: number[]; rate: number; quantity: number; pollUpTo: number; log: (s: string) => void },
): Promise<RealtimeResult> {
  const op = operator(t.baseUrl, t.adminToken);
  const redis = new RedisStats(t.redisUrl);
  const clients = await Clients.start();
  const commands = async <T>(during: () => Promise<T>) => {
    const a = await redis.snapshot();
    const started = performance.now();
    const value = await during();
    const d = RedisStats.delta(a, await redis.snapshot());
    return { value, calls: d.scripts.calls + d.otherCalls, seconds: (performance.now() - started) / 1000 };
  };
  const tag = Date.now().toString(36);
  try {
    const rows: RealtimeRow[] = [];
    for (const n of o.watchers) {
      const sale = await op.createSale(`rt-${n}-${tag}`, 1_000, 2);
      const url = `${t.baseUrl}/api/sales/${sale.saleId}`;
      let measured: RealtimeRow["polling"]["measured"] = null;
      if (n <= o.pollUpTo) {
        const m = await commands(() =>
          clients.ask<{ requests: number }>({
            type: "poll",
            url,
            shoppers: n,
            everyMs: POLL_EVERY_MS,
            durationMs: 6_000,
          }),
        );
        measured = {
          requestsPerSecond: round(m.value.requests / m.seconds),
          commandsPerSecond: round(m.calls / m.seconds),
        };
      }
      const rssBeforeMb = rssMb(t.pid);
      const w = await clients.ask<{ open: number; statuses: Record<string, number>; connectMs: number }>({
        type: "watch",
        url: `${url}/events`,
        count: n,
      });
      o.log(`  ${n} watchers: ${w.open} open in ${w.connectMs} ms ${JSON.stringify(w.statuses)}`);
      const rssAfterMb = rssMb(t.pid);
      const idle = await commands(() => sleep(3_000));
      const plan = {
        baseUrl: t.baseUrl,
        productToken: sale.productToken,
        stock: 1_000,
        quantity: o.quantity,
        rate: o.rate,
        jwtSecret: t.jwtSecret,
        tag: `rt-${tag}-${n}`,
      };
      const cpuBefore = t.pid ? cpuMicros(t.pid) : null;
      const clientBefore = cpuMicros(clients.pid);
      const rush = await commands(() =>
        clients.ask<{ statuses: Record<string, number>; durationMs: number }>({ type: "buy", plan }),
      );
      const cpuAfter = t.pid ? cpuMicros(t.pid) : null;
      const clientAfter = cpuMicros(clients.pid);
      await sleep(1_500);
      const l = await clients.ask<{ latency: LatencySummary; missed: number }>({ type: "latency" });
      await clients.ask({ type: "close" });
      const grew =
        rssBeforeMb !== null && rssAfterMb !== null && w.open > 0
          ? ((rssAfterMb - rssBeforeMb) * 1024) / w.open
          : null;
      rows.push({
        runtime: t.runtime,
        watchers: n,
        open: w.open,
        statuses: w.statuses,
        connectMs: w.connectMs,
        rssBeforeMb,
        rssAfterMb,
        kbPerWatcher: grew === null ? null : round(grew),
        latency: l.latency,
        missed: l.missed,
        buys: rush.value.statuses,
        buySeconds: round(rush.value.durationMs / 1000),
        idleCommandsPerSecond: round(idle.calls / idle.seconds),
        rushCommandsPerSecond: round(rush.calls / rush.seconds),
        polling: {
          requestsPerSecond: round((n * 1000) / POLL_EVERY_MS),
          estimatedCommandsPerSecond: 0,
          measured,
          commandsPerGet: 0,
        },
        engineCpuPercent:
          cpuBefore !== null && cpuAfter !== null ? round((cpuAfter - cpuBefore) / 1e4 / rush.seconds) : null,
        clientCpuPercent: round((clientAfter - clientBefore) / 1e4 / rush.seconds),
      });
      o.log(`    push p50 ${l.latency.p50} ms, p99 ${l.latency.p99} ms, ${l.missed} missed`);
      await sleep(SETTLE_MS);
    }
    // where polling was not run (more pages than this machine serves), per GET × requests/s, the cost
    // per GET taken from the largest polling run (a page's GET reads every sale, cached 500 ms per isolate)
    const largest = rows.filter((r) => r.polling.measured).at(-1)?.polling;
    const commandsPerGet = largest?.measured
      ? round(largest.measured.commandsPerSecond / Math.max(1, largest.measured.requestsPerSecond), 2)
      : 0;
    for (const r of rows) {
      r.polling.commandsPerGet = commandsPerGet;
      r.polling.estimatedCommandsPerSecond = round(r.polling.requestsPerSecond * commandsPerGet);
    }
    return { rate: o.rate, quantity: o.quantity, commandsPerGet, rows };
  } finally {
    clients.stop();
    await redis.close();
  }
}
