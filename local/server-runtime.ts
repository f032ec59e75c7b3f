/**
 * Serves the engine on a server runtime (Deno or Bun) the way production runs it: the bundle of
 * src/runtime/deno.ts or bun.ts (`buildServer`, esbuild, Lua as text), run by that runtime's binary with
 * the stack's settings as environment variables. The counterpart of local/worker-runtime.ts, used by the
 * integration tests (FLASH_RUNTIME=deno|bun), `npm run dev:deno` / `dev:bun` and the benchmark.
 *
 * @example
 * await buildServer("bun");
 * const server = await startServer({ runtime: "bun", vars: stack.vars });
 * await server.scheduled();
 * await server.stop(); // SIGTERM: background work finishes first
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import { LOOPBACK, portOrFree, waitFor } from "./ports";
import type { WorkerRuntime } from "./worker-runtime";

const root = resolve(import.meta.dirname, "..");
export type ServerRuntimeName = "deno" | "bun";
export const serverBundleDir = join(root, ".wrangler", "servers");

/** The bundle's path for a runtime. */
export function serverBundle(runtime: ServerRuntimeName, outdir = serverBundleDir): string {
  return join(outdir, runtime, "server.js");
}

/** Bundles src/runtime/<runtime>.ts into one ES module (.wrangler/servers/<runtime>/server.js). */
export async function buildServer(runtime: ServerRuntimeName, outdir = serverBundleDir): Promise<string> {
  const outfile = serverBundle(runtime, outdir);
  await build({
    entryPoints: [join(root, "src", "runtime", `${runtime}.ts`)],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "es2022",
    loader: { ".lua": "text" },
    // CommonJS dependencies call require() for Node built-ins; give the ES module one.
    banner: {
      js: 'import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);',
    },
    logLevel: "error",
  });
  return outfile;
}

/** The runtime's binary: $DENO_BIN / $BUN_BIN, else node_modules/.bin (the npm packages), else PATH. */
export function runtimeBinary(runtime: ServerRuntimeName): string {
  const fromEnv = process.env[`${runtime.toUpperCase()}_BIN`];
  if (fromEnv) return fromEnv;
  const local = join(root, "node_modules", ".bin", runtime);
  return existsSync(local) ? local : runtime;
}

/**
 * Bun's HTTP server refuses headers past 16 KiB by default with an empty 431; raised to workerd's
 * 128 KiB, the engine's own 32 KiB limit answers first (src/middleware/header-limit.ts).
 */
export const BUN_HEADER_LIMIT = "--max-http-header-size=131072";

function commandFor(runtime: ServerRuntimeName, bundle: string): [string, string[]] {
  return runtime === "deno"
    ? [runtimeBinary("deno"), ["run", "-A", "--unstable-cron", "--no-prompt", bundle]]
    : [runtimeBinary("bun"), [BUN_HEADER_LIMIT, bundle]];
}

export type ServerRuntime = WorkerRuntime & {
  runtime: ServerRuntimeName;
  child: ChildProcess;
  /** Sends a signal to the engine process and waits until it exited; resolves its exit code. */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves the process's exit code once it has exited. */
  exited: Promise<number | null>;
};

/**
 * Starts the bundled engine on `runtime` listening on `port` (0 = a free port) with `vars` as its
 * environment; PUBLIC_URL is this server's URL (or `publicUrl`: a proxy in front of it). CRON_SCHEDULE defaults to "off" (as Miniflare never
 * fires crons by itself): `scheduled()` runs the handler (SIGUSR2) and waits for its report line.
 */
export async function startServer(options: {
  runtime: ServerRuntimeName;
  vars: Record<string, string>;
  port?: number;
  /** PUBLIC_URL when the server is reached through something else (a TLS proxy); default its own URL. */
  publicUrl?: string;
  outdir?: string;
  onOutput?: (text: string) => void;
}): Promise<ServerRuntime> {
  const port = await portOrFree(options.port);
  const url = `http://${LOOPBACK}:${port}`;
  const bundle = serverBundle(options.runtime, options.outdir);
  let vars = options.vars;
  let sweeps = 0;
  const sweepWaiters: Array<{ after: number; resolve: () => void }> = [];

  const launch = (env: Record<string, string>) => {
    const [command, args] = commandFor(options.runtime, bundle);
    const child = spawn(command, args, {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "",
        CRON_SCHEDULE: "off",
        ...env,
        HOSTNAME: LOOPBACK,
        PORT: String(port),
        PUBLIC_URL: options.publicUrl ?? url,
        NO_COLOR: "1",
      },
    });
    const exited = new Promise<number | null>((r) =>
      child.once("exit", (code, signal) => r(code ?? (signal ? -1 : null))),
    );
    let buffered = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      const text = chunk.toString();
      buffered += text;
      for (let i = buffered.indexOf("\n"); i >= 0; i = buffered.indexOf("\n")) {
        const line = buffered.slice(0, i);
        buffered = buffered.slice(i + 1);
        if (line.startsWith("sweep {")) {
          sweeps++;
          for (const w of sweepWaiters.splice(0))
            (sweeps > w.after ? w.resolve : () => sweepWaiters.push(w))();
        }
      }
      (options.onOutput ?? ((t: string) => process.stdout.write(t)))(text);
    });
    child.stderr?.on("data", (chunk: Buffer) =>
      (options.onOutput ?? ((t: string) => process.stderr.write(t)))(chunk.toString()),
    );
    return { child, exited };
  };

  const ready = async (exited: Promise<number | null>) => {
    let gone = false;
    void exited.then(() => {
      gone = true;
    });
    await waitFor(
      async () => {
        if (gone) throw new Error(`${options.runtime} engine exited before it listened`);
        return (await fetch(`${url}/api/health`).catch(() => null))?.ok === true;
      },
      { timeoutMs: 30_000, what: `${options.runtime} engine on ${url}` },
    );
  };

  let current = launch(vars);
  await ready(current.exited);

  const kill = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (current.child.exitCode === null && current.child.signalCode === null) current.child.kill(signal);
    return current.exited;
  };
  const handle: ServerRuntime = {
    runtime: options.runtime,
    url,
    port,
    get child() {
      return current.child;
    },
    get exited() {
      return current.exited;
    },
    async scheduled() {
      const done = new Promise<void>((resolve) => sweepWaiters.push({ after: sweeps, resolve }));
      current.child.kill("SIGUSR2");
      await done;
    },
    async setVars(next) {
      await kill("SIGTERM");
      vars = next;
      current = launch(vars);
      await ready(current.exited);
    },
    kill,
    async stop() {
      const timer = setTimeout(() => current.child.kill("SIGKILL"), 15_000);
      await kill("SIGTERM");
      clearTimeout(timer);
    },
  };
  return handle;
}
