/**
 * Phase 2 of the worker's bench: the per-outcome probes (bench/phases/probes.ts) with QStash delivery paused, so
 * only the buy path runs, in `--rounds` interleaved rounds; then the order pipeline alone, delivering
 * the probes' queued orders with nothing else running.
 *
 * @example
 * const probes = await probePhase(bench);
 * const pipelineAlone = await pipelineAlonePhase(bench); // resumes the delivery probePhase paused
 */

import type { PhaseSummary } from "../clients/protocol";
import type { BenchResult, ProbeResult } from "../measure/measures";
import { Meter } from "../measure/meter";
import type { PgStats } from "../measure/pg-stats";
import { combineRounds, type ProbeRound } from "./probe-rounds";
import { probes } from "./probes";
import { sleep, waitForOrders, waitForQueue } from "./waits";
import { planBase, quietList, type WorkersBench } from "./workers-bench";

/** Every probe, round after round; QStash delivery stays paused for {@link pipelineAlonePhase}. */
export async function probePhase(bench: WorkersBench): Promise<ProbeResult[]> {
  const { env, load, meter, run, sale, open, options, log } = bench;
  log(
    `\n[2/6] per-outcome probes (${options.probeSize.toLocaleString("en-US")} attempts each, QStash delivery paused)`,
  );
  await meter.qstashDelivery(false);
  const rounds = Math.max(1, options.rounds);
  const perRound = Math.ceil(options.probeSize / rounds);
  const byProbe = new Map<string, { expect: string; runs: ProbeRound[] }>();
  for (let round = 0; round < rounds; round++) {
    const sales = { baseUrl: env.workerUrl, soldOutToken: sale.productToken, openToken: open.productToken };
    for (const probe of probes(sales, perRound, `pr-${run}-${round}`)) {
      if (probe.prepare) await quietList(bench, `prepare ${probe.name}`, probe.target, probe.prepare);
      const a = await meter.read({ pg: false });
      const label = `${probe.name} (round ${round + 1}/${rounds})`;
      const res = await load.run({
        kind: "list",
        label,
        target: probe.target,
        items: probe.items,
        ...planBase(bench),
      });
      const b = await meter.read({ pg: false });
      const entry = byProbe.get(probe.name) ?? { expect: probe.expect, runs: [] };
      entry.runs.push({ phase: res.phases[0] as PhaseSummary, costs: Meter.costs(a, b) });
      byProbe.set(probe.name, entry);
    }
  }
  const results: ProbeResult[] = [];
  for (const [name, { expect, runs }] of byProbe) {
    const result = combineRounds(name, expect, runs);
    results.push(result);
    log(
      `  ${name}: ${result.phase.attemptsPerSecond}/s, ${Math.round(result.expectedShare * 100)} % ${expect}`,
    );
  }
  return results;
}

/** The probes' queued orders delivered at once with nothing else running: the pipeline's cost per order. */
export async function pipelineAlonePhase(
  bench: WorkersBench,
): Promise<NonNullable<BenchResult["pipelineAlone"]>> {
  const { op, meter, open, log } = bench;
  const queued = await op.stats(open.saleId);
  log(`  order pipeline alone: resuming QStash delivery for the probes' ${queued.queued} queued orders …`);
  const a = await meter.read();
  await meter.qstashDelivery(true);
  const t = performance.now();
  const drainedMs = await waitForOrders(
    meter.pg as PgStats,
    open.saleId,
    queued.ordersInDb + queued.queued,
    t,
  );
  await sleep(1_500);
  const b = await meter.read();
  await waitForQueue(op, open.saleId);
  return { orders: queued.queued, drainedMs, costs: Meter.costs(a, b) };
}
