/**
 * The engine's bundle for a server runtime: src/runtime/deno.ts or bun.ts and everything it imports in
 * one ES module (esbuild, Lua as text), as `npm run build:servers` and the tests build it.
 */
import { join, resolve } from "node:path";
import { build } from "esbuild";

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
  await bundleForServer(join(root, "src", "runtime", `${runtime}.ts`), outfile, { ".lua": "text" });
  return outfile;
}

/** Bundles `entry` and its dependencies into one ES module a server runtime (Node, Deno, Bun) can run. */
export async function bundleForServer(
  entry: string,
  outfile: string,
  loader?: Record<string, "text">,
): Promise<void> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "es2022",
    ...(loader ? { loader } : {}),
    // CommonJS dependencies call require() for Node built-ins; give the ES module one.
    banner: {
      js: 'import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);',
    },
    logLevel: "error",
  });
}
