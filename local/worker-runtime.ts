/**
 * Serves the worker the way production runs it: the bundle `wrangler deploy --dry-run` produces,
 * inside workerd through Miniflare (no `wrangler dev` proxy in front, which is slow under load).
 * Used by the integration tests, the benchmark and the fault scenarios.
 *
 * @example
 * await buildWorker();
 * const worker = await startWorker({ vars: stack.vars, port: 0 });
 * await fetch(`${worker.url}/api/sales`);
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Readable } from "node:stream";
import { promisify } from "node:util";
import { Miniflare } from "miniflare";
import { LOOPBACK, portOrFree } from "./ports";
import { readVarsFile } from "./vars-file";

const root = resolve(import.meta.dirname, "..");
export const bundleDir = join(root, ".wrangler", "dist");
const COMPATIBILITY_DATE = "2026-07-01";
const COMPATIBILITY_FLAGS = ["nodejs_compat", "enable_request_signal"];

/** Builds the worker bundle with wrangler (the same build `wrangler deploy` uploads). */
export async function buildWorker(outdir = bundleDir): Promise<string> {
  await promisify(execFile)(
    join(root, "node_modules", ".bin", "wrangler"),
    ["deploy", "--dry-run", "--outdir", outdir],
    {
      cwd: root,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
    },
  );
  return outdir;
}

/** The `[vars]` of wrangler.toml (flat string values only), so tests run with the deployed defaults. */
export function wranglerVars(): Record<string, string> {
  const toml = readFileSync(join(root, "wrangler.toml"), "utf8");
  const section = toml.split(/^\[vars\]\s*$/m)[1]?.split(/^\[/m)[0] ?? "";
  const vars: Record<string, string> = {};
  for (const match of section.matchAll(/^([A-Z0-9_]+)\s*=\s*"([^"]*)"/gm))
    vars[match[1] as string] = match[2] as string;
  return vars;
}

/** The secrets of .dev.vars.example (tests use those values; stacks override the URLs). */
export function exampleSecrets(): Record<string, string> {
  return readVarsFile(join(root, ".dev.vars.example"));
}

/** The bundle's modules, listed (Miniflare cannot follow the dynamic import inside @upstash/qstash). */
function bundleModules(outdir: string) {
  const lua = readdirSync(outdir).filter((f) => f.endsWith(".lua"));
  return [
    { type: "ESModule" as const, path: join(outdir, "workers.js") },
    ...lua.map((f) => ({ type: "Text" as const, path: join(outdir, f) })),
  ];
}

function forward(onOutput: (text: string) => void) {
  return (stdout: Readable, stderr: Readable) => {
    for (const stream of [stdout, stderr]) stream.on("data", (chunk: Buffer) => onOutput(chunk.toString()));
  };
}

/** How the engine is started, on workerd (startWorker) or a server runtime (startServer). */
export type RuntimeOptions = {
  vars: Record<string, string>;
  /** 0 or absent: a free port. */
  port?: number;
  /** PUBLIC_URL when the engine is reached through something else (a TLS proxy); default its own URL. */
  publicUrl?: string;
  /** Where the built bundle is. */
  outdir?: string;
  /** Receives the engine's stdout and stderr (console output, runtime warnings) instead of this process. */
  onOutput?: (text: string) => void;
};

export type WorkerRuntime = {
  url: string;
  port: number;
  /** Runs the Cron Trigger once (the outbox sweeper) and waits for it; local/cron.ts fires it on schedule. */
  scheduled(cron?: string): Promise<void>;
  /** Replaces the bindings (restarts the isolate: its caches are lost, as after a deploy). */
  setVars(vars: Record<string, string>): Promise<void>;
  stop(): Promise<void>;
};

/**
 * Starts the built worker in workerd on `port` (0 = a free port) with `vars` as its bindings. The
 * public URL the worker gives QStash for its jobs (PUBLIC_URL) is this server's URL unless `publicUrl`
 * names another (a proxy in front of it).
 */
export async function startWorker(
  options: RuntimeOptions & {
    /** Serve `public/` in front of the worker, routed as wrangler.toml says (`run_worker_first`). */
    assets?: boolean;
    /** how many times a port taken under it was tried again (internal) */
    retries?: number;
  },
): Promise<WorkerRuntime> {
  const port = await portOrFree(options.port);
  const url = `http://${LOOPBACK}:${port}`;
  const outdir = options.outdir ?? bundleDir;
  const config = (vars: Record<string, string>) => ({
    host: LOOPBACK,
    port,
    modulesRoot: outdir,
    modules: bundleModules(outdir),
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: COMPATIBILITY_FLAGS,
    bindings: { ...vars, PUBLIC_URL: options.publicUrl ?? url },
    ...(options.onOutput ? { handleRuntimeStdio: forward(options.onOutput) } : {}),
    ...(options.assets
      ? {
          assets: {
            directory: join(root, "public"),
            binding: "ASSETS",
            routerConfig: { has_user_worker: true, static_routing: { user_worker: ["/api/*"] } },
            assetConfig: { compatibility_date: COMPATIBILITY_DATE, compatibility_flags: COMPATIBILITY_FLAGS },
          },
        }
      : {}),
  });
  const mf = new Miniflare(config(options.vars));
  try {
    await mf.ready;
  } catch (error) {
    // the free port found was taken by another process before workerd bound it: another free port
    if (
      options.port ||
      (error as { code?: string }).code !== "ERR_ADDRESS_IN_USE" ||
      (options.retries ?? 0) >= 3
    )
      throw error;
    await mf.dispose().catch(() => undefined);
    return startWorker({ ...options, retries: (options.retries ?? 0) + 1 });
  }
  return {
    url,
    port,
    async scheduled(cron = "* * * * *") {
      const worker = await mf.getWorker();
      await worker.scheduled({ cron });
    },
    async setVars(vars) {
      await mf.setOptions(config(vars));
    },
    async stop() {
      await mf.dispose();
    },
  };
}
