/**
 * The worker as a browser meets it: the built bundle in workerd (Miniflare) with the static assets of
 * `public/` in front, routed like `wrangler.toml` says (`run_worker_first = ["/api/*"]`), on top of a
 * fresh local stack with migrations applied. For the end-to-end tests in `test/e2e/`.
 *
 * @example
 * const site = await startSite({ vars: { DEV_LOGIN: "true" } });
 * await page.goto(`${site.url}/`);
 * await site.stop();
 */
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { Miniflare } from "miniflare";
import { migrate } from "../../local/migrate";
import { LOOPBACK, portOrFree } from "../../local/ports";
import { type Stack, startStack } from "../../local/stack";
import { bundleDir, exampleSecrets, wranglerVars } from "../../local/worker-runtime";

const root = resolve(import.meta.dirname, "../..");
const COMPATIBILITY_DATE = "2026-07-01";
const COMPATIBILITY_FLAGS = ["nodejs_compat"];

/** The bundle's modules, listed (Miniflare cannot follow the dynamic imports inside the bundle). */
function bundleModules(outdir: string) {
  return [
    { type: "ESModule" as const, path: join(outdir, "index.js") },
    ...readdirSync(outdir)
      .filter((f) => f.endsWith(".lua"))
      .map((f) => ({ type: "Text" as const, path: join(outdir, f) })),
  ];
}

export type Site = {
  url: string;
  stack: Stack;
  stop(): Promise<void>;
};

export async function startSite(
  opts: { vars?: Record<string, string>; outdir?: string } = {},
): Promise<Site> {
  const outdir = opts.outdir ?? bundleDir;
  const stack = await startStack({ mode: "test", quiet: true });
  let mf: Miniflare | undefined;
  try {
    await migrate(stack.vars.DATABASE_URL);
    const port = await portOrFree(0);
    const url = `http://${LOOPBACK}:${port}`;
    mf = new Miniflare({
      host: LOOPBACK,
      port,
      modulesRoot: outdir,
      modules: bundleModules(outdir),
      compatibilityDate: COMPATIBILITY_DATE,
      compatibilityFlags: COMPATIBILITY_FLAGS,
      bindings: { ...wranglerVars(), ...exampleSecrets(), ...stack.vars, ...opts.vars, PUBLIC_URL: url },
      assets: {
        directory: join(root, "public"),
        binding: "ASSETS",
        routerConfig: { has_user_worker: true, static_routing: { user_worker: ["/api/*"] } },
        assetConfig: { compatibility_date: COMPATIBILITY_DATE, compatibility_flags: COMPATIBILITY_FLAGS },
      },
    });
    await mf.ready;
    const worker = mf;
    return {
      url,
      stack,
      async stop() {
        await worker.dispose().catch(() => {});
        await stack.stop();
      },
    };
  } catch (error) {
    await mf?.dispose().catch(() => {});
    await stack.stop();
    throw error;
  }
}
