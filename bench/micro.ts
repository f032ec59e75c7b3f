/**
 * `npx tsx bench/micro.ts`: CPU per step of the buy path inside workerd (`bench/micro/micro-worker.ts`,
 * built with wrangler like the product and served by Miniflare). Each step runs N times in one request;
 * the workerd process's CPU for that request, minus a request running it 0 times, divided by N, is the
 * step's cost. Outbound calls go to a no-op server in this process. Prints a table; the median of
 * three repetitions. Used to back the hot-path suggestions in the benchmark note with evidence.
 */
import { execFile } from "node:child_process";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { exampleSecrets, startWorker, wranglerVars } from "../local/worker-runtime";
import { shopperToken } from "./clients/jwt";
import { findWorkerd, threadCpuMicros } from "./measure/proc";

const root = resolve(import.meta.dirname, "..");
const dir = join(root, ".wrangler", "micro");
const plan: [string, number][] = [
  ["altcha-verify", 5_000],
  ["admission-verify", 10_000],
  ["buy-checks-handwritten", 10_000],
  ["buy-checks-schema", 10_000],
  ["jwt-verify", 20_000],
  ["jwt-verify-cached-key", 20_000],
  ["wait-until", 20_000],
  ["bloom-has", 20_000],
  ["config-parse", 5_000],
  ["qstash-new-client", 20_000],
  ["fetch-subrequest", 2_000],
  ["upstash-script-exec", 2_000],
  ["qstash-batch-new-client", 2_000],
  ["qstash-batch-cached-client", 2_000],
];

async function build(): Promise<string> {
  await mkdir(dir, { recursive: true });
  const config = join(dir, "wrangler.json");
  await writeFile(
    config,
    JSON.stringify({
      name: "flashsale-micro",
      main: join(import.meta.dirname, "micro", "micro-worker.ts"),
      compatibility_date: "2026-07-01",
      compatibility_flags: ["nodejs_compat"],
      rules: [{ type: "Text", globs: ["**/*.lua"], fallthrough: true }],
    }),
  );
  const outdir = join(dir, "dist");
  await promisify(execFile)(
    join(root, "node_modules", ".bin", "wrangler"),
    ["deploy", "--dry-run", "--config", config, "--outdir", outdir],
    {
      cwd: root,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
    },
  );
  await copyFile(join(outdir, "micro-worker.js"), join(outdir, "workers.js")); // the name startWorker serves
  return outdir;
}

/** Answers at once: `{"result":[…]}` for the Redis path (in an array for /pipeline: the client auto-pipelines), a batch reply for QStash, `{}` otherwise. */
function noopServer(): Promise<{ url: string; close(): void }> {
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
    });
    req.on("end", () => {
      const reply = '{"result":[1,"c2JlbmNoLWFiY2RlZmdoaWprbG1ub3BxcnN0",1,1700003600000,998]}';
      const body = req.url?.startsWith("/redis/pipeline")
        ? `[${Array((JSON.parse(text) as unknown[]).length)
            .fill(reply)
            .join(",")}]`
        : req.url?.startsWith("/redis")
          ? reply
          : req.url?.startsWith("/qstash")
            ? '[{"messageId":"m1","url":"u1"},{"messageId":"m2","url":"u2"}]'
            : "{}";
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((ok) =>
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      ok({
        url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
        close: () => server.close(),
      });
    }),
  );
}

async function main(): Promise<void> {
  console.log("building bench/micro/micro-worker.ts with wrangler …");
  const outdir = await build();
  const noop = await noopServer();
  const secrets = { ...wranglerVars(), ...exampleSecrets() };
  const worker = await startWorker({
    outdir,
    vars: {
      ...secrets,
      NOOP_URL: noop.url,
      BENCH_TOKEN: shopperToken(secrets.JWT_SECRET ?? "", "micro-user"),
      BENCH_PRODUCT_TOKEN: "Q".repeat(43),
    },
  });
  try {
    const pid = findWorkerd(worker.port);
    if (!pid) throw new Error("workerd not found");
    const call = async (op: string, n: number) => {
      const before = threadCpuMicros(pid);
      const res = await fetch(`${worker.url}/${op}?n=${n}`);
      const text = await res.text();
      if (!res.ok) throw new Error(`${op}: ${res.status} ${text}`);
      const body = JSON.parse(text) as { envStable?: boolean | null };
      return { cpu: threadCpuMicros(pid) - before, envStable: body.envStable };
    };
    let envStable: boolean | null | undefined = null;
    console.log("\nworkerd CPU per step (µs, median of 3)");
    // MICRO_ONLY=altcha-verify,admission-verify runs only those steps
    const only = process.env.MICRO_ONLY?.split(",");
    for (const [op, n] of plan) {
      if (only && !only.includes(op)) continue;
      await call(op, Math.min(n, 200));
      const samples: number[] = [];
      for (let rep = 0; rep < 3; rep++) {
        const zero = await call(op, 0);
        const full = await call(op, n);
        envStable = full.envStable;
        samples.push((full.cpu - zero.cpu) / n);
      }
      samples.sort((a, b) => a - b);
      console.log(
        `  ${op.padEnd(28)} ${(Math.round((samples[1] ?? 0) * 10) / 10).toString().padStart(8)}   (${samples.map((s) => Math.round(s)).join(", ")})`,
      );
    }
    console.log(`\nenv object the same across requests (readConfig's WeakMap cache hits): ${envStable}`);
  } finally {
    await worker.stop();
    noop.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
