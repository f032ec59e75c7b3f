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
import type { ServerRuntimeName } from "../../local/server-runtime";
import { operator } from "../clients/admin";
import type { ListPlan, LoadResult, ScenarioPlan, Target } from "../clients/protocol";
import { checkInvariant } from "../measure/checks";
import { withoutOrderIds } from "../measure/measures";
import type { PgStats } from "../measure/pg-stats";
import { cpuMicros } from "../measure/proc";
import { type CpuReading, measured, type RuntimeRow } from "../measure/runtime-measures";
import { startEngine } from "../setup/engine-server";
import { probes } from "./probes";
import { type NaiveRowContext, naiveRow } from "./runtime-naive";
import { waitForOrders, waitForQueue } from "./waits";

export type { RuntimeRow };

export type RuntimeBenchContext = NaiveRowContext & {
  /** Attempts per probe (admitted, Bloom miss, sold out warm). */
  probeSize: number;
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

/** One runtime's engine, started for its rows: its URL, its process, its sales, how to read its costs. */
type EngineRun = {
  ctx: RuntimeBenchContext;
  runtime: ServerRuntimeName;
  run: string;
  url: string;
  op: ReturnType<typeof operator>;
  sale: { saleId: string; productToken: string };
  open: { saleId: string; productToken: string };
  read: () => Promise<CpuReading>;
};

async function runtimeRow(ctx: RuntimeBenchContext, runtime: ServerRuntimeName): Promise<RuntimeRow> {
  const { env, meter, log } = ctx;
  const run = `${runtime}-${Date.now().toString(36)}`;
  log(`\n[${runtime}] the engine on ${runtime} (TCP to redis-server and Postgres), the seed-000 crowd`);
  const errors: string[] = [];
  const engine = await startEngine(env, runtime, (line) => errors.push(line));
  const pid = engine.child.pid ?? 0;
  try {
    const op = operator(engine.url, env.adminToken);
    const e: EngineRun = {
      ctx,
      runtime,
      run,
      url: engine.url,
      op,
      sale: await op.createSale(`seed-000-${run}`, 1_000, 2),
      open: await op.createSale(`probes-${run}`, Math.max(10_000, ctx.probeSize * 4), 2),
      read: async () => ({ meter: await meter.read({ pg: false }), cpu: cpuMicros(pid) }),
    };
    await warmUp(e);
    const crowd = await engineCrowd(e);
    const probeRows = await engineProbes(e);
    const naive = await naiveRow(ctx, runtime, run);
    return {
      runtime,
      engine: { ...crowd, errors: errors.slice(0, 10) },
      probes: probeRows,
      naive: naive ? { http: ctx.naiveHttp, load: naive.load, phases: naive.phases, ...naive.totals } : null,
      checks: await runtimeChecks(e, crowd.project, naive?.totals ?? null),
    };
  } finally {
    await engine.stop();
  }
}

const buy = (e: EngineRun, token: string): Target => ({
  baseUrl: e.url,
  path: `/api/buy/${token}`,
  method: "POST",
});
const common = (e: EngineRun) => ({ concurrency: e.ctx.concurrency, jwtSecret: e.ctx.env.jwtSecret });
const list = (e: EngineRun, label: string, target: Target, items: ListPlan["items"]): ListPlan => ({
  kind: "list",
  label,
  target,
  items,
  ...common(e),
});

function scenario(e: EngineRun, label: string, target: Target, tag: string): ScenarioPlan {
  return {
    kind: "scenario",
    label,
    target,
    users: e.ctx.users,
    seed: e.ctx.seed,
    tag,
    pauseAtSoldOut: true,
    rate: e.ctx.rate,
    ...common(e),
  };
}

/** The health route, then one refused attempt per sale and for an unknown token, unmeasured. */
async function warmUp(e: EngineRun): Promise<void> {
  const health: Target = { ...buy(e, ""), path: "/api/health", method: "GET" };
  await e.ctx.load.run({ ...scenario(e, "warm-up", health, `w-${e.run}`), users: 500 }, { quiet: true });
  for (const token of [e.sale.productToken, e.open.productToken, "Q".repeat(43)])
    await e.ctx.load.run(
      list(e, "warm-up", buy(e, token), [{ user: `w-${e.run}`, quantity: 3, ip: "10.255.0.1" }]),
      { quiet: true },
    );
}

/** The crowd: rush until the first SOLD_OUT, then the rest; the order pipeline runs alongside. */
async function engineCrowd(e: EngineRun) {
  const r0 = await e.read();
  let r1: CpuReading | null = null;
  let started = 0;
  const project = await e.ctx.load.run(
    scenario(e, `${e.runtime} engine`, buy(e, e.sale.productToken), `p-${e.run}`),
    {
      onStart: () => {
        started = performance.now();
      },
      onPhaseEnd: async () => {
        r1 = await e.read();
      },
    },
  );
  const r2 = await e.read();
  const drainedAtMs = await waitForOrders(
    e.ctx.meter.pg as PgStats,
    e.sale.saleId,
    project.reservedOrders,
    started,
  );
  return {
    project,
    load: withoutOrderIds(project),
    phases: project.phases.map((p, i) =>
      measured(p, [r0, r1 ?? r2, r2][i] as CpuReading, [r1 ?? r2, r2][i] as CpuReading),
    ),
    soldOutAtMs: project.soldOutAtMs,
    drainedAtMs,
  };
}

/** Probes with QStash delivery paused: only the buy path runs. */
async function engineProbes(e: EngineRun): Promise<RuntimeRow["probes"]> {
  const { load, meter, probeSize } = e.ctx;
  await meter.qstashDelivery(false);
  const probeRows: RuntimeRow["probes"] = [];
  const sales = { baseUrl: e.url, soldOutToken: e.sale.productToken, openToken: e.open.productToken };
  for (const probe of probes(sales, probeSize, `pr-${e.run}`).filter((p) => PROBES.includes(p.name))) {
    const a = await e.read();
    const res = await load.run(list(e, `${e.runtime} ${probe.name}`, probe.target, probe.items), {
      quiet: true,
    });
    const b = await e.read();
    const m = measured(res.phases[0] as LoadResult["phases"][number], a, b);
    probeRows.push({
      name: probe.name,
      expect: probe.expect,
      expectedShare: (m.phase.byOutcome[probe.expect]?.count ?? 0) / Math.max(1, m.phase.attempts),
      ...m,
    });
  }
  await meter.qstashDelivery(true);
  await waitForQueue(e.op, e.open.saleId);
  return probeRows;
}

/** The invariant on the runtime's sales and naive server, each check named after the runtime. */
async function runtimeChecks(
  e: EngineRun,
  project: LoadResult,
  naive: Parameters<typeof checkInvariant>[0]["naive"],
): Promise<RuntimeRow["checks"]> {
  const checks = await checkInvariant({
    op: e.op,
    pg: e.ctx.meter.pg as PgStats,
    sale: { saleId: e.sale.saleId, stock: 1_000, perUserLimit: 2 },
    open: e.open.saleId,
    project,
    naive,
  });
  return checks.map((c) => ({ ...c, name: `${e.runtime}: ${c.name}` }));
}
