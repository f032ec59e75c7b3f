/**
 * `npm run chaos`: builds the worker (and the Deno and Bun bundles when a scenario runs on a server),
 * runs every fault scenario (each on a fresh local stack, under the concurrent workload, then the
 * checker), prints the table and writes chaos/output/report.md and report.json (plus each scenario's
 * history). Exits non-zero when any scenario fails.
 *
 * @example
 * npm run chaos                                   # every scenario, full size (a few minutes)
 * npm run chaos -- --size ci --only qstash-chaos  # one scenario, CI size
 */
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildServer } from "../local/server-runtime";
import { buildWorker } from "../local/worker-runtime";
import { markdownTable, terminalTable, writeReport } from "./report";
import { runScenario, type ScenarioResult, type Size } from "./scenario";
import { scenarios } from "./scenarios";

const { values: args } = parseArgs({
  options: {
    size: { type: "string", default: "full" },
    only: { type: "string", default: "" },
    seed: { type: "string", default: "1" },
    out: { type: "string", default: join(import.meta.dirname, "output") },
  },
});
const size = args.size as Size;
const seed = Number(args.seed);
const only = new Set(args.only.split(",").filter(Boolean));
const chosen = scenarios.filter((s) => only.size === 0 || only.has(s.name));

const startedAt = new Date();
const say = quietWorker(join(args.out, "worker.log"));
for (const event of ["uncaughtException", "unhandledRejection"] as const)
  process.on(event, (error: Error) => {
    say(`chaos crashed: ${error?.stack ?? error}`);
    process.exit(2);
  });
say(`chaos: building the worker, then ${chosen.length} scenario(s), size ${size}, seed ${seed}`);
await buildWorker();
if (chosen.some((s) => s.start)) await Promise.all([buildServer("deno"), buildServer("bun")]);
const results: ScenarioResult[] = [];
for (const scenario of chosen) {
  const result = await runScenario(scenario, size, { seed, out: args.out, log: say });
  results.push(result);
}
const durationMs = Date.now() - startedAt.getTime();
const files = await writeReport(args.out, results, {
  size,
  seed,
  startedAt: startedAt.toISOString(),
  durationMs,
});
say(`\n${terminalTable(results)}\n`);
say(`report: ${files.md}, ${files.json}; the worker's own log: ${join(args.out, "worker.log")}`);
await writeFile(join(args.out, "report.table.md"), `${markdownTable(results)}\n`);
const failed = results.filter((r) => r.verdict === "FAIL" || r.verdict === "error");
process.exit(failed.length ? 1 : 0);

/**
 * Sends everything else printed to the terminal (workerd's log of the errors the faults cause) to
 * `file`, and returns the function that still prints.
 */
function quietWorker(file: string): (line: string) => void {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, "");
  const out = process.stdout.write.bind(process.stdout);
  const toFile = (chunk: unknown, ...rest: unknown[]) => {
    appendFileSync(file, typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array));
    const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
    done?.();
    return true;
  };
  process.stdout.write = toFile as typeof process.stdout.write;
  process.stderr.write = toFile as typeof process.stderr.write;
  return (line) => {
    out(`${line}\n`);
  };
}
