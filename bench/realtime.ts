/**
 * The realtime phase alone (it also runs in `npm run bench`; see realtime-phase.ts and bench/README.md):
 * starts the local stack and, per `--runtimes` (default workers), the worker in workerd or the engine on
 * Deno or Bun (the bundle of src/runtime/<runtime>.ts, local/server-runtime.ts, TCP to the stack's
 * redis-server and Postgres, as bench/phases/runtimes.ts runs it), one at a time; or uses the engine at `--url`,
 * whose process is `--pid`, for memory. Prints one table (a row per runtime and watcher count) and writes
 * it into `latest.json` beside the other figures.
 *
 * @example
 * npx tsx bench/realtime.ts --watchers 1000,3000
 * npx tsx bench/realtime.ts --runtimes bun --watchers 10,1000,10000
 * BENCH_REDIS_URL=redis://127.0.0.1:6390 npx tsx bench/realtime.ts --url http://127.0.0.1:8000 --pid 1234 --runtime bun
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { ServerRuntimeName } from "../local/server-runtime";
import { type RealtimeResult, type RealtimeTarget, realtimePhase } from "./phases/realtime-phase";
import { printRealtime } from "./report/realtime-report";
import { startEngine } from "./setup/engine-server";
import { type BenchEnvironment, startEnvironment } from "./setup/environment";

const { values: args } = parseArgs({
  options: {
    watchers: { type: "string", default: "10,1000,10000" },
    rate: { type: "string", default: "50" },
    quantity: { type: "string", default: "2" },
    "poll-up-to": { type: "string", default: "1000" },
    url: { type: "string" },
    pid: { type: "string" },
    runtime: { type: "string" },
    runtimes: { type: "string", default: "workers" },
    out: { type: "string", default: join(import.meta.dirname, "output") },
  },
});
if (args.url) process.env.BENCH_WORKER_URL = args.url;

const runtimes = args.runtimes.split(",").map((r) => r.trim());
for (const r of runtimes)
  if (r !== "workers" && r !== "deno" && r !== "bun") throw new Error(`--runtimes: unknown runtime ${r}`);

/** The engine on Deno or Bun against the environment's stack, for the duration of `run`. */
async function onServer<T>(
  env: BenchEnvironment,
  runtime: ServerRuntimeName,
  run: (target: Pick<RealtimeTarget, "runtime" | "baseUrl" | "pid">) => Promise<T>,
): Promise<T> {
  console.log(`\n[${runtime}] building and starting the engine (TCP to redis-server and Postgres) …`);
  const engine = await startEngine(env, runtime, (line) => process.stderr.write(`[${runtime}] ${line}\n`));
  try {
    return await run({ runtime, baseUrl: engine.url, pid: engine.child.pid ?? null });
  } finally {
    await engine.stop();
  }
}

async function main(): Promise<void> {
  const env = await startEnvironment(console.log, {
    worker: args.url !== undefined || runtimes.includes("workers"),
  });
  try {
    const options = {
      watchers: args.watchers.split(",").map(Number),
      rate: Number(args.rate),
      quantity: Number(args.quantity),
      pollUpTo: Number(args["poll-up-to"]),
      log: console.log,
    };
    const stores = { redisUrl: env.redisUrl, adminToken: env.adminToken, jwtSecret: env.jwtSecret };
    const results: RealtimeResult[] = [];
    if (args.url)
      results.push(
        await realtimePhase(
          {
            runtime: args.runtime ?? "external",
            baseUrl: env.workerUrl,
            pid: args.pid ? Number(args.pid) : env.pids.workerd,
            ...stores,
          },
          options,
        ),
      );
    else
      for (const runtime of runtimes) {
        console.log(`\n[${runtime}] realtime: ${args.watchers} watchers`);
        results.push(
          runtime === "workers"
            ? await realtimePhase(
                { runtime: "workerd", baseUrl: env.workerUrl, pid: env.pids.workerd, ...stores },
                options,
              )
            : await onServer(env, runtime as ServerRuntimeName, (t) =>
                realtimePhase({ ...t, ...stores }, options),
              ),
        );
      }
    const result: RealtimeResult = {
      ...(results[0] as RealtimeResult),
      rows: results.flatMap((r) => r.rows),
    };
    printRealtime(result);
    await mkdir(args.out, { recursive: true });
    const file = join(args.out, "latest.json");
    const latest = JSON.parse(await readFile(file, "utf8").catch(() => "{}")) as Record<string, unknown>;
    await writeFile(file, `${JSON.stringify({ ...latest, realtime: result }, null, 2)}\n`);
    console.log(`\nwrote the realtime figures into ${file}`);
  } finally {
    await env.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
