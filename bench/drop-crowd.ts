/**
 * Drops against the worker in workerd, also the `dropcost` and `drop` phases of `npm run bench`: the
 * one-line buy's engine and Redis CPU against today's single-variant sale (bench/phases/one-line-cost.ts),
 * then the drop crowd, 100,000 shoppers with carts for 12 sizes of 100 units, judged per variant
 * (bench/phases/drop-crowd.ts). Prints the figures and checks, writes bench/output/latest-drop.json, and
 * exits non-zero when a check fails.
 *
 * @example
 * npm run bench:drop                                   # both, full size (a few minutes)
 * npm run bench:drop -- --shoppers 5000 --window 20    # a quick run while developing
 * npm run bench:drop -- --skip crowd                   # the CPU rows alone
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { LoadClient } from "./clients/load-client";
import { Meter } from "./measure/meter";
import { PgStats } from "./measure/pg-stats";
import { RedisStats } from "./measure/redis-stats";
import { loadAverage } from "./measure/run-meta";
import { type DropOptions, type DropResult, dropCrowdPhase } from "./phases/drop-crowd";
import { type OneLineRow, oneLineCostPhase } from "./phases/one-line-cost";
import { type WorkersBench, workersBench } from "./phases/workers-bench";
import { printDrop, printOneLine } from "./report/drop-report";
import { startEnvironment } from "./setup/environment";

export type DropPhasesOptions = DropOptions & {
  costRounds: number;
  costCalls: number;
  /** `cost` and `crowd` leave the phase out */
  skip: Set<string>;
  out: string;
};

/** Both phases, printed and written to latest-drop.json; true when every check held. */
export async function dropPhases(bench: WorkersBench, o: DropPhasesOptions): Promise<boolean> {
  const loadAtStart = loadAverage();
  let oneLine: OneLineRow[] | null = null;
  let crowd: DropResult | null = null;
  if (!o.skip.has("cost")) {
    oneLine = await oneLineCostPhase(bench, { rounds: o.costRounds, calls: o.costCalls });
    printOneLine(oneLine, bench.log);
  }
  if (!o.skip.has("crowd")) {
    crowd = await dropCrowdPhase(bench, o);
    printDrop(crowd, bench.log);
  }
  await mkdir(o.out, { recursive: true });
  const file = join(o.out, "latest-drop.json");
  const record = {
    date: new Date().toISOString(),
    loadAverage: [loadAtStart, loadAverage()],
    oneLine,
    crowd,
  };
  await writeFile(file, `${JSON.stringify(record, null, 2)}\n`);
  bench.log(`wrote ${file}`);
  return crowd?.checks.every((c) => c.ok) ?? true;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      shoppers: { type: "string", default: "100000" },
      units: { type: "string", default: "100" },
      window: { type: "string", default: "60" },
      concurrency: { type: "string", default: "50" },
      seed: { type: "string", default: "0" },
      "cost-rounds": { type: "string", default: "9" },
      "cost-calls": { type: "string", default: "1000" },
      skip: { type: "string", default: "" },
      out: { type: "string", default: join(import.meta.dirname, "output") },
    },
  });
  const log = (line: string) => console.log(line);
  const env = await startEnvironment(log);
  const load = await LoadClient.start();
  const redis = new RedisStats(env.redisUrl);
  const pg = new PgStats(env.databaseUrl);
  try {
    await pg.open();
    const meter = new Meter(env, redis, pg);
    const options = {
      users: 0,
      concurrency: Number(values.concurrency),
      seed: Number(values.seed),
      rate: 0,
      probeSize: 0,
      rounds: 1,
      naivePool: 0,
      hotRowMs: 0,
      directRequests: 0,
    };
    const bench = await workersBench({ env, load, meter, options, log });
    const ok = await dropPhases(bench, {
      shoppers: Number(values.shoppers),
      units: Number(values.units),
      paymentWindowSeconds: Number(values.window),
      costRounds: Number(values["cost-rounds"]),
      costCalls: Number(values["cost-calls"]),
      skip: new Set(values.skip.split(",").filter(Boolean)),
      out: values.out,
    });
    return ok ? 0 : 1;
  } finally {
    load.stop();
    await redis.close();
    await pg.close().catch(() => undefined);
    await env.stop();
  }
}

if (process.argv[1]?.endsWith("drop-crowd.ts")) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(2);
    },
  );
}
