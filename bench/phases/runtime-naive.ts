/**
 * The naive Postgres server on a server runtime (the across-runtimes rows, bench/phases/runtimes.ts):
 * bench/baselines/naive-server.ts bundled as the engine is, run by that runtime's binary, the seed-000
 * crowd against it, its process's CPU read before, at sell-out and after.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { LOOPBACK, portOrFree, waitFor } from "../../local/ports";
import { bundleForServer } from "../../local/server-bundle";
import { runtimeBinary, type ServerRuntimeName } from "../../local/server-runtime";
import { stopChild } from "../baselines/children";
import { naiveTotals, prepareNaiveDatabase } from "../baselines/naive-db";
import type { LoadClient } from "../clients/load-client";
import { withoutOrderIds } from "../measure/measures";
import type { Meter } from "../measure/meter";
import { cpuMicros } from "../measure/proc";
import { type CpuReading, measured } from "../measure/runtime-measures";
import { benchServersDir } from "../setup/engine-server";
import type { BenchEnvironment } from "../setup/environment";

const root = resolve(import.meta.dirname, "..", "..");

/** What the naive row needs of the runtimes' bench. */
export type NaiveRowContext = {
  env: BenchEnvironment;
  load: LoadClient;
  meter: Meter;
  users: number;
  concurrency: number;
  seed: number;
  rate: number;
  naivePool: number;
  /** The naive server's HTTP layer on the runtime: its own (`Bun.serve`/`Deno.serve`) or node:http. */
  naiveHttp: "native" | "node";
  log: (line: string) => void;
};

/** The naive Postgres server on `runtime`, the same crowd. */
export async function naiveRow(ctx: NaiveRowContext, runtime: ServerRuntimeName, run: string) {
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
export async function startNaiveOn(runtime: ServerRuntimeName, env: Record<string, string>) {
  const bundle = join(benchServersDir, runtime, "naive-server.js");
  await bundleForServer(join(import.meta.dirname, "..", "baselines", "naive-server.ts"), bundle);
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
