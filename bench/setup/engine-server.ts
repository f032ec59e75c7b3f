/**
 * The engine on Deno or Bun for the bench: the bundle of src/runtime/<runtime>.ts (local/server-runtime.ts)
 * built into .wrangler/bench-servers and started against the bench's stack, TCP to its redis-server and
 * Postgres (REDIS_URL, DATABASE_DRIVER=tcp), the client address taken from CF-Connecting-IP as the load
 * generator sends it. Used by the runtimes' rows (bench/phases/runtimes.ts) and the realtime phase on a server
 * runtime (bench/realtime.ts).
 *
 * @example
 * const engine = await startEngine(env, "bun", (line) => errors.push(line));
 * try { … engine.url … } finally { await engine.stop(); }
 */
import { join } from "node:path";
import {
  buildServer,
  type ServerRuntime,
  type ServerRuntimeName,
  startServer,
} from "../../local/server-runtime";
import type { BenchEnvironment } from "./environment";

/** Where the bench builds the server runtimes' bundles (the engine's and the naive server's). */
export const benchServersDir = join(import.meta.dirname, "..", "..", ".wrangler", "bench-servers");

/** Builds and starts the engine on `runtime`; `onProblem` gets its error and warning lines (300 chars). */
export async function startEngine(
  env: BenchEnvironment,
  runtime: ServerRuntimeName,
  onProblem: (line: string) => void,
  /** settings on top of the bench's (a tracing variant, say) */
  extra: Record<string, string> = {},
): Promise<ServerRuntime> {
  await buildServer(runtime, benchServersDir);
  return startServer({
    runtime,
    outdir: benchServersDir,
    vars: {
      ...env.vars,
      TRUST_PROXY_HEADER: "CF-Connecting-IP",
      REDIS_URL: env.redisUrl,
      DATABASE_DRIVER: "tcp",
      ...(process.env.PG_POOL_MAX ? { PG_POOL_MAX: process.env.PG_POOL_MAX } : {}),
      ...extra,
    },
    onOutput: (text) => {
      if (/error|warn/i.test(text)) onProblem(text.trim().slice(0, 300));
    },
  });
}
