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
import type { LoadResult } from "../clients/protocol";
import { checkInvariant } from "../measure/checks";
import type { PgStats } from "../measure/pg-stats";
import { cpuMicros } from "../measure/proc";
import type { RuntimeRow } from "../measure/runtime-measures";
import { startEngine } from "../setup/engine-server";
import {
  type EngineRun,
  engineCrowd,
  engineProbes,
  type RuntimeBenchContext,
  warmUp,
} from "./runtime-engine";
import { naiveRow } from "./runtime-naive";

export type { RuntimeBenchContext, RuntimeRow };

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
