/**
 * `npm run bench:tracing`: what tracing costs the engine on Bun, measured with wrk on the floor's paths (a
 * sale the process knows sold out, 410; an admitted buy, 202, the order pipeline running), the engine
 * started once per variant — tracing off, 1 % of traces sampled, every trace — exporting to an OTLP
 * receiver on loopback (local/otlp-receiver.ts). Variants are interleaved over `--rounds`, so the
 * machine's drift falls on each alike; only the ratios to "off" of the same run count.
 *
 * @example
 * npm run bench:tracing -- --rounds 3 --seconds 8
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startOtlpReceiver } from "../local/otlp-receiver";
import { loadAverage } from "./measure/run-meta";
import { type FloorContext, type FloorRow, floorPaths } from "./phases/floor-paths";
import { startEngine } from "./setup/engine-server";
import { startEnvironment } from "./setup/environment";

const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "8" },
    connections: { type: "string", default: "50" },
    tokens: { type: "string", default: "100000" },
    out: { type: "string", default: join(import.meta.dirname, "output") },
  },
});

const VARIANTS = [
  { name: "off", vars: {} },
  { name: "1 % sampled", vars: { OTEL_TRACES_SAMPLER_ARG: "0.01" } },
  { name: "every trace", vars: { OTEL_TRACES_SAMPLER_ARG: "1" } },
] as const;

type Figures = { reqPerSec: number[]; cpuUs: number[]; p99Ms: number[] };

async function main(): Promise<void> {
  const log = (line: string) => console.log(line);
  const loadAtStart = loadAverage();
  const env = await startEnvironment(log, { worker: false });
  const otlp = await startOtlpReceiver();
  const ctx: FloorContext = {
    env,
    seconds: Number(args.seconds),
    connections: Number(args.connections),
    tokens: Number(args.tokens),
    paths: new Set(["soldout", "instock"]),
    dir: join(args.out, "wrk"),
    log,
  };
  const figures = new Map<string, Figures>();
  try {
    for (let round = 1; round <= Number(args.rounds); round++) {
      for (const variant of VARIANTS) {
        const tracing =
          variant.name === "off" ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, ...variant.vars };
        const engine = await startEngine(env, "bun", () => undefined, tracing);
        try {
          log(`round ${round}, tracing ${variant.name}`);
          const rows = await floorPaths(ctx, {
            name: `bun ${variant.name}`,
            url: engine.url,
            pid: engine.child.pid ?? 0,
            admin: true,
          });
          for (const row of rows) keep(figures, `${row.path}|${variant.name}`, row);
        } finally {
          await engine.stop();
        }
      }
    }
  } finally {
    await otlp.close();
    await env.stop();
  }
  log(
    `\ntracing on Bun, ${args.rounds} interleaved rounds of ${args.seconds} s per path (mean; ratio to off)`,
  );
  log("path | tracing | req/s | engine CPU µs/req | p99 ms | req/s vs off | CPU vs off");
  for (const path of new Set([...figures.keys()].map((k) => k.split("|")[0]))) {
    const off = figures.get(`${path}|off`);
    for (const variant of VARIANTS) {
      const f = figures.get(`${path}|${variant.name}`);
      if (!f || !off) continue;
      log(
        `${path} | ${variant.name} | ${mean(f.reqPerSec).toFixed(0)} | ${mean(f.cpuUs).toFixed(1)} | ${mean(f.p99Ms).toFixed(1)} | ${(mean(f.reqPerSec) / mean(off.reqPerSec)).toFixed(3)} | ${(mean(f.cpuUs) / mean(off.cpuUs)).toFixed(3)}`,
      );
    }
  }
  log(
    `spans received: ${otlp.spans().length}; load average at start ${loadAtStart}, at end ${loadAverage()}`,
  );
}

function keep(figures: Map<string, Figures>, key: string, row: FloorRow): void {
  const f = figures.get(key) ?? { reqPerSec: [], cpuUs: [], p99Ms: [] };
  f.reqPerSec.push(row.wrk.reqPerSec);
  f.cpuUs.push(row.cpuPerRequest.server);
  f.p99Ms.push(row.wrk.p99Us / 1000);
  figures.set(key, f);
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
