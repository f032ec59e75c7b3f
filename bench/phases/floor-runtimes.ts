/**
 * The wrk rows of every runtime asked for (`--runtimes`): the engine in workerd (the bench's worker), on
 * Deno and on Bun (bench/setup/engine-server.ts), each followed by the naive server on that runtime
 * (Deno and Bun; the workerd rows use the Bun naive server's figures as their neighbour). One engine or
 * server at a time, so nothing else of the bench loads the machine.
 *
 * @example
 * const { runtimes } = await floorRuntimes(env, { workers: true, servers: ["bun"] }, options, log);
 */
import { join } from "node:path";
import type { ServerRuntimeName } from "../../local/server-runtime";
import { naiveTotals, prepareNaiveDatabase } from "../baselines/naive-db";
import { type FloorRuntime, printFloor } from "../report/floor-report";
import { startEngine } from "../setup/engine-server";
import type { BenchEnvironment } from "../setup/environment";
import { type FloorContext, floorPaths, naiveFloorPaths } from "./floor-paths";
import { startNaiveOn } from "./runtime-naive";

/** How long each path runs, with how many connections and distinct tokens; where files go. */
export type FloorOptions = {
  seconds: number;
  connections: number;
  tokens: number;
  out: string;
  /** only these paths (bench/phases/floor-paths.ts PATH_KEYS); all when absent */
  paths?: ReadonlySet<string>;
};

/** Runs the rows, prints the table, and resolves them. */
export async function floorRuntimes(
  env: BenchEnvironment,
  runtimes: { workers: boolean; servers: ServerRuntimeName[] },
  options: FloorOptions,
  log: (line: string) => void,
): Promise<{ runtimes: FloorRuntime[] }> {
  const ctx: FloorContext = { env, ...options, dir: join(options.out, "wrk"), log };
  const out: FloorRuntime[] = [];
  log(`\nper-path rows with wrk (${options.seconds} s each, ${options.connections} connections)`);
  if (runtimes.workers && env.pids.workerd) {
    const rows = await floorPaths(ctx, {
      name: "workers",
      url: env.workerUrl,
      pid: env.pids.workerd,
      admin: true,
    });
    out.push({ runtime: "workers", rows, naive: [] });
  }
  for (const runtime of runtimes.servers) {
    const engine = await startEngine(env, runtime, () => undefined);
    let rows: FloorRuntime["rows"];
    try {
      rows = await floorPaths(ctx, {
        name: runtime,
        url: engine.url,
        pid: engine.child.pid ?? 0,
        admin: true,
      });
    } finally {
      await engine.stop();
    }
    const naiveRows: FloorRuntime["naive"] = [];
    for (const which of ["naive", "naive-soldout"] as const) {
      if (options.paths && !options.paths.has(which)) continue;
      naiveRows.push(...(await naiveRowsOn(ctx, runtime, which)));
    }
    out.push({ runtime, rows, naive: naiveRows });
  }
  printFloor(out, log);
  return { runtimes: out };
}

/** The naive server on `runtime`, its hot row full (in stock) or at 0 (every attempt sold out). */
async function naiveRowsOn(
  ctx: FloorContext,
  runtime: ServerRuntimeName,
  which: "naive" | "naive-soldout",
): Promise<FloorRuntime["naive"]> {
  const naiveUrl = await prepareNaiveDatabase(ctx.env.databaseUrl, which === "naive" ? 5_000_000 : 0);
  const naive = await startNaiveOn(runtime, {
    NAIVE_DATABASE_URL: naiveUrl,
    JWT_SECRET: ctx.env.jwtSecret,
    NAIVE_POOL: "10",
    NAIVE_HTTP: "native",
  });
  try {
    const target = { name: `${runtime} naive`, url: naive.url, pid: naive.pid, admin: false };
    const rows = await naiveFloorPaths(ctx, target, which);
    await naiveTotals(naiveUrl);
    return rows;
  } finally {
    await naive.stop();
  }
}
