/**
 * The worker's bench before and at its heart: the warm-up of the isolate, then phase 1, the seed-000
 * crowd against the worker, split at the first SOLD_OUT answer (rush, after), with the order pipeline
 * running alongside until every reserved order is in Postgres.
 *
 * @example
 * await warmUp(bench);
 * const project = await projectPhase(bench);
 * const figures = projectFigures(project);
 */

import type { LoadResult } from "../clients/protocol";
import type { BenchResult, Measured } from "../measure/measures";
import { perAttempt, withoutOrderIds } from "../measure/measures";
import { type Costs, Meter, type Reading } from "../measure/meter";
import type { PgStats } from "../measure/pg-stats";
import { sleep, waitForOrders } from "./waits";
import { buyTarget, crowd, planBase, quietList, type WorkersBench } from "./workers-bench";

/** The crowd's answers, its phases' costs, when the last order reached Postgres, the pipeline's costs. */
export type ProjectRun = {
  load: LoadResult;
  phases: Measured[];
  drainedAtMs: number | null;
  pipelineCosts: Costs;
};

/** Health, Bloom misses and one refused attempt per sale, so the measured phases meet a warm isolate. */
export async function warmUp(bench: WorkersBench): Promise<void> {
  const { load, run, sale, open, log } = bench;
  log("warming up the isolate (health, Bloom misses, one refused attempt per sale) …");
  await load.run(
    {
      kind: "scenario",
      label: "warm-up",
      target: { ...buyTarget(bench, ""), path: "/api/health", method: "GET" },
      users: 500,
      seed: 1,
      tag: `warm-${run}`,
      pauseAtSoldOut: false,
      ...planBase(bench),
    },
    { quiet: true },
  );
  for (const token of [sale.productToken, open.productToken, "Q".repeat(43)])
    await quietList(bench, "warm-up", buyTarget(bench, token), [
      { user: `warm-${run}`, quantity: 3, ip: "10.255.0.1" },
    ]);
}

/** Phase 1: the seed-000 crowd on the seed-000 sale; counters read at sell-out and after the drain. */
export async function projectPhase(bench: WorkersBench): Promise<ProjectRun> {
  const { load, meter, run, sale, log } = bench;
  log("\n[1/6] project: the seed-000 crowd against the worker");
  const pg = meter.pg as PgStats;
  const r0 = await meter.read();
  let r1: Reading | null = null;
  let started = 0;
  let drain: Promise<number | null> | null = null;
  const project = await load.run(crowd(bench, "project", buyTarget(bench, sale.productToken), `p-${run}`), {
    onStart: () => {
      started = performance.now();
    },
    onPhaseEnd: async (m) => {
      r1 = await meter.read({ pg: false });
      drain = waitForOrders(pg, sale.saleId, m.reservedOrders, started);
    },
  });
  const r2 = await meter.read({ pg: false });
  drain ??= waitForOrders(pg, sale.saleId, project.reservedOrders, started);
  const drainedAtMs = await drain;
  await sleep(1_500); // Postgres publishes its transaction counters at most once a second per backend
  const r3 = await meter.read();
  return {
    load: project,
    phases: measuredPhases(project, [r0, r1 ?? r2, r2]),
    drainedAtMs,
    pipelineCosts: Meter.costs(r0, r3),
  };
}

/** Phase summaries with the costs between consecutive readings (rush: r0→r1, after: r1→r2). */
export function measuredPhases(result: LoadResult, readings: [Reading, Reading, Reading]): Measured[] {
  return result.phases.map((phase, i) => {
    const costs = Meter.costs(readings[i] as Reading, readings[i + 1] as Reading);
    return { phase, costs, per: perAttempt(costs, phase.attempts) };
  });
}

/** Phase 1 as the result record has it: the crowd, its phases and the pipeline's costs per order. */
export function projectFigures(project: ProjectRun): BenchResult["project"] {
  const orders = project.load.reservedOrders;
  const costs = project.pipelineCosts;
  const perOrder = (v: number | null | undefined) =>
    v === null || v === undefined || orders === 0 ? null : Math.round((v / orders) * 100) / 100;
  return {
    load: withoutOrderIds(project.load),
    phases: project.phases,
    soldOutAtMs: project.load.soldOutAtMs,
    drainedAtMs: project.drainedAtMs,
    pipeline: {
      orders,
      units: project.load.reservedUnits,
      costs,
      qstashPublishedPerOrder: perOrder(costs.qstash?.published),
      qstashDeliveriesPerOrder: perOrder(costs.qstash?.attempts),
      pgStatementsPerOrder: perOrder(costs.pg?.statements),
      pgTransactionsPerOrder: perOrder(costs.pg?.transactions),
      workerCpuMicrosPerOrder: null,
    },
  };
}
