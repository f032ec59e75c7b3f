/**
 * The realtime phase alone (it also runs in `npm run bench`; see realtime-phase.ts and bench/README.md):
 * starts the local stack and the worker in workerd (or uses the engine at `--url`, whose process is
 * `--pid`, for memory), prints the table and writes it into `latest.json` beside the other figures.
 *
 * @example
 * npx tsx bench/realtime.ts --watchers 10,1000,10000
 * BENCH_REDIS_URL=redis://127.0.0.1:6390 npx tsx bench/realtime.ts --url http://127.0.0.1:8000 --pid 1234 --runtime bun
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startEnvironment } from "./environment";
import { realtimePhase } from "./realtime-phase";
import { printRealtime } from "./realtime-report";

const { values: args } = parseArgs({
  options: {
    watchers: { type: "string", default: "10,1000,10000" },
    rate: { type: "string", default: "50" },
    quantity: { type: "string", default: "2" },
    "poll-up-to": { type: "string", default: "1000" },
    url: { type: "string" },
    pid: { type: "string" },
    runtime: { type: "string" },
    out: { type: "string", default: join(import.meta.dirname, "output") },
  },
});
if (args.url) process.env.BENCH_WORKER_URL = args.url;

async function main(): Promise<void> {
  const env = await startEnvironment(console.log);
  try {
    const result = await realtimePhase(
      {
        runtime: args.runtime ?? (args.url ? "external" : "workerd"),
        baseUrl: env.workerUrl,
        pid: args.pid ? Number(args.pid) : env.pids.workerd,
        redisUrl: env.redisUrl,
        adminToken: env.adminToken,
        jwtSecret: env.jwtSecret,
      },
      {
        watchers: args.watchers.split(",").map(Number),
        rate: Number(args.rate),
        quantity: Number(args.quantity),
        pollUpTo: Number(args["poll-up-to"]),
        log: console.log,
      },
    );
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
