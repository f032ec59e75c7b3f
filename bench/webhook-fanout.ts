/**
 * The webhook fan-out phase alone (bench/phases/webhook-fanout.ts; also the `webhooks` phase of
 * `npm run bench`): in-stock buys on a server runtime with 0, 1 and 3 endpoints subscribed to the order
 * events, per order: CPU of each process, QStash messages, deliveries, and Redis commands per buy.
 *
 * @example
 * npx tsx --import ./local/lua-as-text.mjs bench/webhook-fanout.ts --runtime bun --seconds 6
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { ServerRuntimeName } from "../local/server-runtime";
import { loadAverage } from "./measure/run-meta";
import { printFanout, webhookFanoutPhase } from "./phases/webhook-fanout";
import { startEnvironment } from "./setup/environment";

const { values: args } = parseArgs({
  options: {
    runtime: { type: "string", default: "bun" },
    endpoints: { type: "string", default: "0,1,3" },
    seconds: { type: "string", default: "6" },
    connections: { type: "string", default: "50" },
    tokens: { type: "string", default: "150000" },
    out: { type: "string", default: join(import.meta.dirname, "output") },
    // each round's Postgres statements by execution time (pg_stat_statements)
    statements: { type: "boolean", default: false },
    // QStash delivers while wrk runs (a steady rush) instead of holding deliveries until it ends
    steady: { type: "boolean", default: false },
  },
});

async function main(): Promise<void> {
  const log = (line: string) => console.log(line);
  const loadAtStart = loadAverage();
  const env = await startEnvironment(log, { worker: false });
  try {
    await mkdir(join(args.out, "wrk"), { recursive: true });
    log(
      `\nwebhook fan-out on ${args.runtime}: in-stock buys with ${args.endpoints} endpoints (wrk, ${args.seconds} s each)`,
    );
    const rows = await webhookFanoutPhase(env, {
      runtime: args.runtime as ServerRuntimeName,
      endpoints: args.endpoints.split(",").map(Number),
      seconds: Number(args.seconds),
      connections: Number(args.connections),
      tokens: Number(args.tokens),
      out: args.out,
      statements: args.statements,
      steady: args.steady,
      log,
    });
    printFanout(rows, log);
    await writeFile(
      join(args.out, "latest-webhooks.json"),
      `${JSON.stringify({ loadAtStart, loadAtEnd: loadAverage(), rows }, null, 2)}\n`,
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
