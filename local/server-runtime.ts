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
import { LOOPBACK, portOrFree, waitFor } from "./ports";
import {
  buildServer,
  bundleForServer,
  type ServerRuntimeName,
  serverBundle,
  serverBundleDir,
} from "./server-bundle";
import type { RuntimeOptions, WorkerRuntime } from "./worker-runtime";

const root = resolve(import.meta.dirname, "..");

/** The bundle's build lives in server-bundle.ts; these stay importable from here. */
export { buildServer, bundleForServer, type ServerRuntimeName, serverBundle, serverBundleDir };

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
  // ENGINE_RUNTIME_FLAGS: extra flags for the runtime, e.g. "--cpu-prof --cpu-prof-md" to profile a bench
  const extra = (process.env.ENGINE_RUNTIME_FLAGS ?? "").split(" ").filter(Boolean);
  return runtime === "deno"
    ? [runtimeBinary("deno"), ["run", "-A", "--unstable-cron", "--no-prompt", ...extra, bundle]]
    : [runtimeBinary("bun"), [BUN_HEADER_LIMIT, ...extra, bundle]];
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
export async function startServer(
  options: RuntimeOptions & { runtime: ServerRuntimeName },
): Promise<ServerRuntime> {
  const port = await portOrFree(options.port);
  const engine: Engine = {
    runtime: options.runtime,
    port,
    url: `http://${LOOPBACK}:${port}`,
    publicUrl: options.publicUrl,
    bundle: serverBundle(options.runtime, options.outdir),
    onOutput: options.onOutput,
    sweeps: { count: 0, waiters: [] },
  };
  let current = launch(engine, options.vars);
  await untilListening(engine, current.exited);

  const kill = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (current.child.exitCode === null && current.child.signalCode === null) current.child.kill(signal);
    return current.exited;
  };
  return {
    runtime: options.runtime,
    url: engine.url,
    port,
    get child() {
      return current.child;
    },
    get exited() {
      return current.exited;
    },
    async scheduled() {
      const done = new Promise<void>((resolve) =>
        engine.sweeps.waiters.push({ after: engine.sweeps.count, resolve }),
      );
      current.child.kill("SIGUSR2");
      await done;
    },
    async setVars(next) {
      await kill("SIGTERM");
      current = launch(engine, next);
      await untilListening(engine, current.exited);
    },
    kill,
    async stop() {
      const timer = setTimeout(() => current.child.kill("SIGKILL"), 15_000);
      await kill("SIGTERM");
      clearTimeout(timer);
    },
  };
}

/** One engine across its restarts: where it listens, its bundle, and the sweeps it reported. */
type Engine = {
  runtime: ServerRuntimeName;
  port: number;
  url: string;
  publicUrl: string | undefined;
  bundle: string;
  onOutput: ((text: string) => void) | undefined;
  /** "sweep {…}" report lines seen, and `scheduled()` calls waiting for the next one. */
  sweeps: { count: number; waiters: Array<{ after: number; resolve: () => void }> };
};

/** Spawns the engine process with `env`, forwarding its output and counting its sweep reports. */
function launch(
  engine: Engine,
  env: Record<string, string>,
): { child: ChildProcess; exited: Promise<number | null> } {
  const [command, args] = commandFor(engine.runtime, engine.bundle);
  const child = spawn(command, args, {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      CRON_SCHEDULE: "off",
      ...env,
      HOSTNAME: LOOPBACK,
      PORT: String(engine.port),
      PUBLIC_URL: engine.publicUrl ?? engine.url,
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
      if (line.startsWith("sweep {")) sweepReported(engine.sweeps);
    }
    (engine.onOutput ?? ((t: string) => process.stdout.write(t)))(text);
  });
  child.stderr?.on("data", (chunk: Buffer) =>
    (engine.onOutput ?? ((t: string) => process.stderr.write(t)))(chunk.toString()),
  );
  return { child, exited };
}

function sweepReported(sweeps: Engine["sweeps"]): void {
  sweeps.count++;
  for (const w of sweeps.waiters.splice(0))
    (sweeps.count > w.after ? w.resolve : () => sweeps.waiters.push(w))();
}

/** Resolves once the engine answers its health route; rejects if it exits first. */
async function untilListening(engine: Engine, exited: Promise<number | null>): Promise<void> {
  let gone = false;
  // what the health route last said, for the error if it never says ok
  let last = "no answer";
  const listening = waitFor(
    async () => {
      if (gone) return true;
      const res = await fetch(`${engine.url}/api/health`).catch((e: Error) => e);
      if (res instanceof Error) last = `no answer (${res.message})`;
      else last = `${res.status} ${(await res.text()).slice(0, 300)}`;
      return !(res instanceof Error) && res.ok;
    },
    // a machine running several test files at once may start a process slowly: 60 s, then say what it last answered
    { timeoutMs: 60_000, what: () => `${engine.runtime} engine on ${engine.url} (health: ${last})` },
  );
  const code = await Promise.race([exited, listening.then(() => undefined)]);
  gone = true;
  if (code !== undefined) {
    await listening.catch(() => {});
    throw new Error(`${engine.runtime} engine exited (${code}) before it listened`);
  }
}
