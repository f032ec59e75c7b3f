/**
 * One server runtime's engine under the across-runtimes bench (bench/phases/runtimes.ts): the plans sent
 * to it, its warm-up, the seed-000 crowd split at sell-out, and the probes with QStash delivery paused.
 */
import type { ServerRuntimeName } from "../../local/server-runtime";
import type { operator } from "../clients/admin";
import type { ListPlan, LoadResult, ScenarioPlan, Target } from "../clients/protocol";
import { withoutOrderIds } from "../measure/measures";
import type { PgStats } from "../measure/pg-stats";
import { type CpuReading, measured, type RuntimeRow } from "../measure/runtime-measures";
import { probes } from "./probes";
import type { NaiveRowContext } from "./runtime-naive";
import { waitForOrders, waitForQueue } from "./waits";

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

/** One runtime's engine, started for its rows: its URL, its process, its sales, how to read its costs. */
export type EngineRun = {
  ctx: RuntimeBenchContext;
  runtime: ServerRuntimeName;
  run: string;
  url: string;
  op: ReturnType<typeof operator>;
  sale: { saleId: string; productToken: string };
  open: { saleId: string; productToken: string };
  read: () => Promise<CpuReading>;
};

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
export async function warmUp(e: EngineRun): Promise<void> {
  const health: Target = { ...buy(e, ""), path: "/api/health", method: "GET" };
  await e.ctx.load.run({ ...scenario(e, "warm-up", health, `w-${e.run}`), users: 500 }, { quiet: true });
  for (const token of [e.sale.productToken, e.open.productToken, "Q".repeat(43)])
    await e.ctx.load.run(
      list(e, "warm-up", buy(e, token), [{ user: `w-${e.run}`, quantity: 3, ip: "10.255.0.1" }]),
      { quiet: true },
    );
}

/** The crowd: rush until the first SOLD_OUT, then the rest; the order pipeline runs alongside. */
export async function engineCrowd(e: EngineRun) {
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
export async function engineProbes(e: EngineRun): Promise<RuntimeRow["probes"]> {
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
