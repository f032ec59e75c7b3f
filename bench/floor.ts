/**
 * `npm run bench:floor`: the per-path rows with wrk alone (bench/phases/floor-paths.ts), without the
 * crowd and probe phases of `npm run bench` (which runs them too, unless `--skip floor`). Prints the table
 * and writes bench/output/latest-floor.json.
 *
 * @example
 * npm run bench:floor -- --runtimes bun,deno --seconds 8
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadAverage } from "./measure/run-meta";
import { PATH_KEYS } from "./phases/floor-paths";
import { type FloorOptions, floorRuntimes } from "./phases/floor-runtimes";
import { parseRuntimes } from "./phases/runtimes-output";
import { startEnvironment } from "./setup/environment";

const { values: args } = parseArgs({
  options: {
    runtimes: { type: "string", default: "workers,deno,bun" },
    seconds: { type: "string", default: "8" },
    connections: { type: "string", default: "50" },
    tokens: { type: "string", default: "300000" },
    // e.g. --paths soldout to profile one path (ENGINE_RUNTIME_FLAGS="--cpu-prof --cpu-prof-md")
    paths: { type: "string", default: PATH_KEYS.join(",") },
    out: { type: "string", default: join(import.meta.dirname, "output") },
  },
});

async function main(): Promise<void> {
  const runtimes = parseRuntimes(args.runtimes);
  const log = (line: string) => console.log(line);
  const loadAtStart = loadAverage();
  const env = await startEnvironment(log, { worker: runtimes.workers });
  try {
    const options: FloorOptions = {
      seconds: Number(args.seconds),
      connections: Number(args.connections),
      tokens: Number(args.tokens),
      out: args.out,
      paths: new Set(args.paths.split(",").map((p) => p.trim())),
    };
    const result = await floorRuntimes(env, runtimes, options, log);
    await writeFile(
      join(args.out, "latest-floor.json"),
      `${JSON.stringify({ loadAtStart, loadAtEnd: loadAverage(), ...result }, null, 2)}\n`,
    );
    log(`load average at start ${loadAtStart}, at end ${loadAverage()}`);
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
