/**
 * The server runtimes' rows of `npm run bench`: the engine on Deno and on Bun (the bundle of
 * src/runtime/<runtime>.ts, local/server-runtime.ts, talking TCP to the stack's redis-server and
 * Postgres: REDIS_URL, DATABASE_DRIVER=tcp), the seed-000 crowd split at sell-out, three probes (admitted,
 * Bloom miss, sold out in a warm process), then the naive Postgres server on the same runtime and the same
 * crowd, so the ratio between them measures the design and not the runtime.
 *
 * Engine and naive server CPU are read from /proc/<pid>/stat (utime + stime of every thread, exited ones
 * included) before and after each phase.
 *
 * @example
 * const rows = await serverRuntimeRows(ctx, ["bun", "deno"]);
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import { LOOPBACK, portOrFree, waitFor } from "../../local/ports";
import { runtimeBinary, type ServerRuntimeName } from "../../local/server-runtime";
import { stopChild } from "../baselines/children";
import { naiveTotals, prepareNaiveDatabase } from "../baselines/naive-db";
import { operator } from "../clients/admin";
import type { LoadClient } from "../clients/load-client";
import type { LoadResult, ScenarioPlan, Target } from "../clients/protocol";
import { checkInvariant } from "../measure/checks";
import { withoutOrderIds } from "../measure/measures";
import type { Meter } from "../measure/meter";
import type { PgStats } from "../measure/pg-stats";
import { cpuMicros } from "../measure/proc";
import { type CpuReading, measured, type RuntimeRow } from "../measure/runtime-measures";
import { benchServersDir, startEngine } from "../setup/engine-server";
import type { BenchEnvironment } from "../setup/environment";
import { probes } from "./probes";
import { waitForOrders, waitForQueue } from "./waits";

export type { RuntimeRow };

const root = resolve(import.meta.dirname, "..", "..");

export type RuntimeBenchContext = {
  env: BenchEnvironment;
  load: LoadClient;
  meter: Meter;
  users: number;
  concurrency: number;
  seed: number;
  rate: number;
  naivePool: number;
  /** Attempts per probe (admitted, Bloom miss, sold out warm). */
  probeSize: number;
  /** The naive server's HTTP layer on the runtime: its own (`Bun.serve`/`Deno.serve`) or node:http. */
  naiveHttp: "native" | "node";
  log: (line: string) => void;
};

const PROBES = [
  "no-op route GET /api/health",
  "reserve (admitted, stock left)",
  "unknown product (Bloom miss)",
  "sold out, warm isolate",
];

/** Runs the rows of each runtime in turn (one engine or server at a time, nothing else loading the machine). */
export async function serverRuntimeRows(
  ctx: RuntimeBenchContext,
  runtimes: ServerRuntimeName[],
): Promise<RuntimeRow[]> {
  const rows: RuntimeRow[] = [];
  for (const runtime of runtimes) rows.push(await runtimeRow(ctx, runtime));
  return rows;
}

async function runtimeRow(ctx: RuntimeBenchContext, runtime: ServerRuntimeName): Promise<RuntimeRow> {
  const { env, load, meter, log } = ctx;
  const run = `${runtime}-${Date.now().toString(36)}`;
  log(`\n[${runtime}] the engine on ${runtime} (TCP to redis-server and Postgres), the seed-000 crowd`);
  const errors: string[] = [];
  const engine = await startEngine(env, runtime, (line) => errors.push(line));
  const pid = engine.child.pid ?? 0;
  const base = { concurrency: ctx.concurrency, jwtSecret: env.jwtSecret };
  const buy = (token: string): Target => ({ baseUrl: engine.url, path: `/api/buy/${token}`, method: "POST" });
  const scenario = (label: string, target: Target, tag: string): ScenarioPlan => ({
    kind: "scenario",
    label,
    target,
    users: ctx.users,
    seed: ctx.seed,
    tag,
    pauseAtSoldOut: true,
    rate: ctx.rate,
    ...base,
  });
  try {
    const op = operator(engine.url, env.adminToken);
    const sale = await op.createSale(`seed-000-${run}`, 1_000, 2);
    const open = await op.createSale(`probes-${run}`, Math.max(10_000, ctx.probeSize * 4), 2);
    await load.run(
      { ...scenario("warm-up", { ...buy(""), path: "/api/health", method: "GET" }, `w-${run}`), users: 500 },
      { quiet: true },
    );
    for (const token of [sale.productToken, open.productToken, "Q".repeat(43)])
      await load.run(
        {
          kind: "list",
          label: "warm-up",
          target: buy(token),
          items: [{ user: `w-${run}`, quantity: 3, ip: "10.255.0.1" }],
          ...base,
        },
        { quiet: true },
      );

    // The crowd: rush until the first SOLD_OUT, then the rest; the order pipeline runs alongside.
    const read = async (): Promise<CpuReading> => ({
      meter: await meter.read({ pg: false }),
      cpu: cpuMicros(pid),
    });
    const r0 = await read();
    let r1: CpuReading | null = null;
    let started = 0;
    const project = await load.run(scenario(`${runtime} engine`, buy(sale.productToken), `p-${run}`), {
      onStart: () => {
        started = performance.now();
      },
      onPhaseEnd: async () => {
        r1 = await read();
      },
    });
    const r2 = await read();
    const drainedAtMs = await waitForOrders(
      meter.pg as PgStats,
      sale.saleId,
      project.reservedOrders,
      started,
    );

    // Probes with QStash delivery paused: only the buy path runs.
    await meter.qstashDelivery(false);
    const probeRows: RuntimeRow["probes"] = [];
    const sales = { baseUrl: engine.url, soldOutToken: sale.productToken, openToken: open.productToken };
    for (const probe of probes(sales, ctx.probeSize, `pr-${run}`).filter((p) => PROBES.includes(p.name))) {
      const a = await read();
      const res = await load.run(
        {
          kind: "list",
          label: `${runtime} ${probe.name}`,
          target: probe.target,
          items: probe.items,
          ...base,
        },
        { quiet: true },
      );
      const b = await read();
      const m = measured(res.phases[0] as LoadResult["phases"][number], a, b);
      probeRows.push({
        name: probe.name,
        expect: probe.expect,
        expectedShare: (m.phase.byOutcome[probe.expect]?.count ?? 0) / Math.max(1, m.phase.attempts),
        ...m,
      });
    }
    await meter.qstashDelivery(true);
    await waitForQueue(op, open.saleId);

    const naive = await naiveRow(ctx, runtime, run);
    const checks = (
      await checkInvariant({
        op,
        pg: meter.pg as PgStats,
        sale: { saleId: sale.saleId, stock: 1_000, perUserLimit: 2 },
        open: open.saleId,
        project,
        naive: naive?.totals ?? null,
      })
    ).map((c) => ({ ...c, name: `${runtime}: ${c.name}` }));
    return {
      runtime,
      engine: {
        load: withoutOrderIds(project),
        phases: project.phases.map((p, i) =>
          measured(p, [r0, r1 ?? r2, r2][i] as CpuReading, [r1 ?? r2, r2][i] as CpuReading),
        ),
        soldOutAtMs: project.soldOutAtMs,
        drainedAtMs,
        errors: errors.slice(0, 10),
      },
      probes: probeRows,
      naive: naive ? { http: ctx.naiveHttp, load: naive.load, phases: naive.phases, ...naive.totals } : null,
      checks,
    };
  } finally {
    await engine.stop();
  }
}

/** The naive Postgres server on `runtime`, the same crowd. */
async function naiveRow(ctx: RuntimeBenchContext, runtime: ServerRuntimeName, run: string) {
  const { env, load, meter } = ctx;
  ctx.log(
    `[${runtime}] naive Postgres server on ${runtime} (${ctx.naiveHttp === "native" ? (runtime === "bun" ? "Bun.serve" : "Deno.serve") : "node:http"}, pg pool of ${ctx.naivePool})`,
  );
  const naiveUrl = await prepareNaiveDatabase(env.databaseUrl, 1_000);
  const server = await startNaiveOn(runtime, {
    NAIVE_DATABASE_URL: naiveUrl,
    JWT_SECRET: env.jwtSecret,
    NAIVE_POOL: String(ctx.naivePool),
    NAIVE_HTTP: ctx.naiveHttp,
  });
  try {
    const read = async (): Promise<CpuReading> => ({
      meter: await meter.read({ pg: false }),
      cpu: cpuMicros(server.pid),
    });
    const a = await read();
    let mid: CpuReading | null = null;
    const res = await load.run(
      {
        kind: "scenario",
        label: `${runtime} naive`,
        target: { baseUrl: server.url, path: "/buy/seed-000", method: "POST" },
        users: ctx.users,
        seed: ctx.seed,
        tag: `nv-${run}`,
        pauseAtSoldOut: true,
        rate: ctx.rate,
        concurrency: ctx.concurrency,
        jwtSecret: env.jwtSecret,
      },
      {
        onPhaseEnd: async () => {
          mid = await read();
        },
      },
    );
    const b = await read();
    return {
      load: withoutOrderIds(res),
      phases: res.phases.map((p, i) =>
        measured(p, [a, mid ?? b, b][i] as CpuReading, [mid ?? b, b][i] as CpuReading),
      ),
      totals: await naiveTotals(naiveUrl),
    };
  } finally {
    await server.stop();
  }
}

/** Bundles bench/baselines/naive-server.ts (as the engine is bundled) and runs it with the runtime's binary. */
async function startNaiveOn(runtime: ServerRuntimeName, env: Record<string, string>) {
  const bundle = join(benchServersDir, runtime, "naive-server.js");
  await build({
    entryPoints: [join(import.meta.dirname, "..", "baselines", "naive-server.ts")],
    outfile: bundle,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "es2022",
    banner: {
      js: 'import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);',
    },
    logLevel: "error",
  });
  const port = await portOrFree(0);
  const args = runtime === "deno" ? ["run", "-A", "--no-prompt", bundle] : [bundle];
  const child: ChildProcess = spawn(runtimeBinary(runtime), args, {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      ...env,
      NAIVE_SERVE: "1",
      NAIVE_PORT: String(port),
      NO_COLOR: "1",
    },
  });
  const url = `http://${LOOPBACK}:${port}`;
  await waitFor(async () => (await fetch(`${url}/`).catch(() => null)) !== null, {
    timeoutMs: 30_000,
    what: `naive server on ${runtime}`,
  });
  return {
    url,
    pid: child.pid ?? 0,
    stop: () => stopChild(child),
  };
}
