/**
 * Costs that do not grow with the sale (issue 20, item 4): at 10,000, 100,000 and 1,000,000 orders
 * (seeded straight in the stores, bench/clients/operator-seed.ts), on the engine on Bun: the time and
 * engine CPU of `GET …/stats`, of one incremental `POST …/reconcile` run and of a full one
 * (`?full=1`, up to `--full-up-to` orders: it is linear by design), and the engine's CPU per second while one operator page watches the sale's stream.
 *
 * @example
 * npx tsx --import ./local/lua-as-text.mjs bench/operator-scale.ts   # 10k, 100k, 1M orders (about 5 min)
 * npx tsx --import ./local/lua-as-text.mjs bench/operator-scale.ts --sizes 10000,100000 --full-up-to 0
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { ServerRuntimeName } from "../local/server-runtime";
import { operator } from "./clients/admin";
import { seedOrders } from "./clients/operator-seed";
import { cpuMicros } from "./measure/proc";
import { startEngine } from "./setup/engine-server";
import { type BenchEnvironment, startEnvironment } from "./setup/environment";

export type ScaleRow = {
  orders: number;
  seedSeconds: number;
  invariantHolds: boolean;
  stats: { ms: number; cpuMs: number };
  reconcile: { ms: number; cpuMs: number; checkedLedgerEntries: number; checkedOrders: number };
  fullReconcile: { ms: number; cpuMs: number } | null;
  /** engine CPU per second with one operator stream open, less the idle engine's (10 ms clock ticks) */
  streamCpuMsPerSecond: number;
  streamingCpuMsPerSecond: number;
  idleCpuMsPerSecond: number;
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const round = (v: number, digits = 1) => Math.round(v * 10 ** digits) / 10 ** digits;

/**
 * `run` timed `times` over: the median wall time and the engine's CPU per call, in ms (the process's
 * user + system time from /proc/<pid>/stat, every thread's, exited ones too, over all the calls: the
 * clock tick is 10 ms).
 */
async function timed<T>(pid: number, times: number, run: () => Promise<T>) {
  const walls: number[] = [];
  let last: T | undefined;
  const c0 = cpuMicros(pid);
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    last = await run();
    walls.push(performance.now() - t0);
  }
  const cpuMs = (cpuMicros(pid) - c0) / 1000 / times;
  return { ms: round(median(walls)), cpuMs: round(cpuMs, 2), last: last as T };
}

/** Engine CPU per second over `seconds`, with the operator stream of `saleId` open or not. */
async function cpuPerSecond(
  engine: { url: string; pid: number },
  adminToken: string,
  saleId: string | null,
  seconds: number,
): Promise<number> {
  const stop = new AbortController();
  let events = 0;
  if (saleId) {
    const res = await fetch(`${engine.url}/api/admin/sales/${saleId}/events`, {
      headers: { authorization: `Bearer ${adminToken}`, accept: "text/event-stream" },
      signal: stop.signal,
    });
    void (async () => {
      const reader = res.body?.getReader();
      try {
        for (;;) {
          const { done, value } = (await reader?.read()) ?? { done: true, value: undefined };
          if (done) break;
          events += new TextDecoder().decode(value).split("event: stats").length - 1;
        }
      } catch {
        // aborted
      }
    })();
    await new Promise((r) => setTimeout(r, 1_500)); // the first reading, at connect
  }
  const c0 = cpuMicros(engine.pid);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const used = cpuMicros(engine.pid) - c0;
  stop.abort();
  if (saleId && events === 0) throw new Error("the operator stream sent no stats event");
  return round(used / 1000 / seconds, 2);
}

/** One sale of `orders` orders: seeded, then each figure measured. */
async function scaleRow(
  env: BenchEnvironment,
  engine: { url: string; pid: number },
  orders: number,
  o: { fullUpTo: number; streamSeconds: number; log: (line: string) => void },
): Promise<ScaleRow> {
  const admin = operator(engine.url, env.adminToken);
  const stock = orders + 1_000;
  const sale = await admin.createSale(`scale-${orders}-${Date.now().toString(36)}`, stock, 2);
  const t0 = performance.now();
  await seedOrders(env, { saleId: sale.saleId, stock }, orders);
  const seedSeconds = round((performance.now() - t0) / 1000);
  await new Promise((r) => setTimeout(r, 5_500)); // the reconciliation checks orders written 5 s ago
  const call = async (method: string, path: string) => {
    const res = await fetch(`${engine.url}/api/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${env.adminToken}` },
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  for (let i = 0; i < 3; i++) await call("GET", `/sales/${sale.saleId}/stats`); // warm
  const stats = await timed(engine.pid, 9, () => call("GET", `/sales/${sale.saleId}/stats`));
  // the stream before the reconciliation runs, whose garbage would be collected during it
  const idle = await cpuPerSecond(engine, env.adminToken, null, o.streamSeconds);
  const streaming = await cpuPerSecond(engine, env.adminToken, sale.saleId, o.streamSeconds);
  const reconcile = await timed(engine.pid, 3, () => call("POST", `/sales/${sale.saleId}/reconcile`));
  const full =
    orders <= o.fullUpTo
      ? await timed(engine.pid, 1, () => call("POST", `/sales/${sale.saleId}/reconcile?full=1`))
      : null;
  const row: ScaleRow = {
    orders,
    seedSeconds,
    invariantHolds: stats.last.invariantHolds === true,
    stats: { ms: stats.ms, cpuMs: stats.cpuMs },
    reconcile: {
      ms: reconcile.ms,
      cpuMs: reconcile.cpuMs,
      checkedLedgerEntries: Number(reconcile.last.checkedLedgerEntries),
      checkedOrders: Number(reconcile.last.checkedOrders),
    },
    fullReconcile: full ? { ms: full.ms, cpuMs: full.cpuMs } : null,
    streamCpuMsPerSecond: round(Math.max(0, streaming - idle), 2),
    streamingCpuMsPerSecond: streaming,
    idleCpuMsPerSecond: idle,
  };
  o.log(`  ${orders.toLocaleString("en-US")} orders: ${JSON.stringify(row)}`);
  return row;
}

/** The rows as a Markdown table. */
export function scaleTable(runtime: string, rows: ScaleRow[]): string {
  const lines = [
    `${runtime}: engine CPU from /proc, median wall time of 9 stats reads and 3 reconcile runs, CPU their mean`,
    "",
    "| orders | stats ms (engine CPU ms) | reconcile run ms (CPU ms; entries / orders checked) | full reconcile ms (CPU ms) | operator stream: engine CPU ms/s (idle engine) | invariant |",
    "|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const full = r.fullReconcile ? `${r.fullReconcile.ms} (${r.fullReconcile.cpuMs})` : "–";
    lines.push(
      `| ${r.orders.toLocaleString("en-US")} | ${r.stats.ms} (${r.stats.cpuMs}) | ${r.reconcile.ms} (${r.reconcile.cpuMs}; ${r.reconcile.checkedLedgerEntries} / ${r.reconcile.checkedOrders}) | ${full} | ${r.streamingCpuMsPerSecond} (${r.idleCpuMsPerSecond}) | ${r.invariantHolds ? "holds" : "BROKEN"} |`,
    );
  }
  return lines.join("\n");
}

/** Every size's row on one server runtime: the table printed, bench/output/operator-scale.json written. */
export async function operatorScalePhase(
  env: BenchEnvironment,
  o: {
    runtime: ServerRuntimeName;
    sizes: number[];
    /** the full reconciliation (`?full=1`, linear by design) is measured up to this many orders */
    fullUpTo: number;
    streamSeconds: number;
    out: string;
    log: (line: string) => void;
  },
): Promise<ScaleRow[]> {
  const engine = await startEngine(
    { ...env, vars: { ...env.vars, CRON_SCHEDULE: "off" } },
    o.runtime,
    (line) => o.log(`engine: ${line}`),
  );
  try {
    const pid = engine.child.pid;
    if (!pid) throw new Error("the engine has no pid");
    const rows: ScaleRow[] = [];
    for (const size of o.sizes) rows.push(await scaleRow(env, { url: engine.url, pid }, size, o));
    o.log(`\n${scaleTable(o.runtime, rows)}`);
    await mkdir(o.out, { recursive: true });
    await writeFile(
      join(o.out, "operator-scale.json"),
      `${JSON.stringify({ runtime: o.runtime, rows }, null, 2)}\n`,
    );
    return rows;
  } finally {
    await engine.stop();
  }
}

/** `--sizes` (orders per sale, comma-separated), `--runtime`, `--full-up-to`, `--stream-seconds`. */
export const SCALE_DEFAULTS = { sizes: "10000,100000,1000000", fullUpTo: "100000", streamSeconds: "10" };

async function main() {
  const { values } = parseArgs({
    options: {
      runtime: { type: "string", default: "bun" },
      sizes: { type: "string", default: SCALE_DEFAULTS.sizes },
      "full-up-to": { type: "string", default: SCALE_DEFAULTS.fullUpTo },
      "stream-seconds": { type: "string", default: SCALE_DEFAULTS.streamSeconds },
      out: { type: "string", default: join(import.meta.dirname, "output") },
    },
  });
  const log = (line: string) => console.log(line);
  const env = await startEnvironment(log, { worker: false });
  try {
    await operatorScalePhase(env, {
      runtime: values.runtime as ServerRuntimeName,
      sizes: values.sizes.split(",").map(Number),
      fullUpTo: Number(values["full-up-to"]),
      streamSeconds: Number(values["stream-seconds"]),
      out: values.out,
      log,
    });
  } finally {
    await env.stop();
  }
}

if (process.argv[1]?.endsWith("operator-scale.ts")) {
  main().catch((error) => {
    console.error(error);
    process.exit(2);
  });
}
