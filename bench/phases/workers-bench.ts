/**
 * What every phase of the worker's bench (bench/run.ts) works with: the stack, the load generator, the
 * meter, the operator's calls, this run's two sales (the seed-000 sale of 1,000 units and the probes'
 * open sale), the command line's figures and the log; and the plans the phases hand the load generator.
 *
 * @example
 * const bench = await workersBench({ env, load, meter, options, log });
 * await bench.load.run(crowd(bench, "project", buyTarget(bench, bench.sale.productToken), `p-${bench.run}`));
 */
import { type CreatedSale, operator } from "../clients/admin";
import type { LoadClient } from "../clients/load-client";
import type { ListPlan, LoadResult, ScenarioPlan, Target } from "../clients/protocol";
import type { Meter } from "../measure/meter";
import type { BenchEnvironment } from "../setup/environment";

/** The command line's figures (bench/README.md lists the options). */
export type WorkersOptions = {
  users: number;
  concurrency: number;
  seed: number;
  /** Open-loop arrival rate of the crowds, per second; 0 = closed loop. */
  rate: number;
  /** Attempts per probe, over `rounds` interleaved rounds. */
  probeSize: number;
  rounds: number;
  naivePool: number;
  hotRowMs: number;
  directRequests: number;
};

export type WorkersBench = {
  env: BenchEnvironment;
  load: LoadClient;
  meter: Meter;
  op: ReturnType<typeof operator>;
  options: WorkersOptions;
  log: (line: string) => void;
  /** This run's tag (the start time in base 36): in sale names and shopper ids, so runs never meet. */
  run: string;
  /** The seed-000 sale: 1,000 units, limit 2. */
  sale: CreatedSale;
  /** The probes' sale, large enough that the probes never sell it out. */
  open: CreatedSale;
};

/** Creates this run's two sales on the worker. */
export async function workersBench(
  parts: Pick<WorkersBench, "env" | "load" | "meter" | "options" | "log">,
): Promise<WorkersBench> {
  const op = operator(parts.env.workerUrl, parts.env.adminToken);
  const run = Date.now().toString(36);
  const sale = await op.createSale(`seed-000-${run}`, 1_000, 2);
  const open = await op.createSale(`probes-${run}`, Math.max(10_000, parts.options.probeSize * 10), 2);
  return { ...parts, op, run, sale, open };
}

/** What every plan carries: the connections and the secret the shoppers' tokens are signed with. */
export function planBase(bench: WorkersBench): { concurrency: number; jwtSecret: string } {
  return { concurrency: bench.options.concurrency, jwtSecret: bench.env.jwtSecret };
}

/** `POST /api/buy/<token>` on the worker. */
export function buyTarget(bench: WorkersBench, token: string): Target {
  return { baseUrl: bench.env.workerUrl, path: `/api/buy/${token}`, method: "POST" };
}

/** The seed-000 crowd (`--users`, `--seed`, `--rate`) against `target`, split at the first SOLD_OUT. */
export function crowd(bench: WorkersBench, label: string, target: Target, tag: string): ScenarioPlan {
  const { users, seed, rate } = bench.options;
  return {
    kind: "scenario",
    label,
    target,
    users,
    seed,
    tag,
    pauseAtSoldOut: true,
    rate,
    ...planBase(bench),
  };
}

/** Runs a list of attempts without printing progress (warm-up, a probe's preparation). */
export function quietList(
  bench: WorkersBench,
  label: string,
  target: Target,
  items: ListPlan["items"],
): Promise<LoadResult> {
  return bench.load.run({ kind: "list", label, target, items, ...planBase(bench) }, { quiet: true });
}
