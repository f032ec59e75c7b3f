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
import { migrate } from "../../local/migrate";
import { type Stack, startStack } from "../../local/stack";
import { exampleSecrets, startWorker, type WorkerRuntime, wranglerVars } from "../../local/worker-runtime";
import { removeStackDir, stackDirFromTemplate } from "./postgres-template";

export type Site = {
  url: string;
  stack: Stack;
  stop(): Promise<void>;
};

export async function startSite(
  opts: { vars?: Record<string, string>; outdir?: string; stripe?: boolean } = {},
): Promise<Site> {
  const dir = await stackDirFromTemplate();
  const stack = await startStack({
    mode: "test",
    quiet: true,
    ...(dir ? { dir } : {}),
    ...(opts.stripe ? { stripe: true } : {}),
  }).catch(async (error: unknown) => {
    await removeStackDir(dir);
    throw error;
  });
  let worker: WorkerRuntime | undefined;
  try {
    await migrate(stack.vars.DATABASE_URL);
    worker = await startWorker({
      // every page of the browser tests comes from this machine's one address: no per-address stream cap
      vars: {
        ...wranglerVars(),
        ...exampleSecrets(),
        ...stack.vars,
        REALTIME_MAX_STREAMS_PER_IP: "1000",
        ...opts.vars,
      },
      assets: true,
      ...(opts.outdir ? { outdir: opts.outdir } : {}),
    });
    const running = worker;
    stack.stripe?.webhooks.setUrl(`${running.url}/api/payments/stripe/webhook`);
    return {
      url: running.url,
      stack,
      async stop() {
        await running.stop().catch(() => {});
        await stack.stop();
        await removeStackDir(dir);
      },
    };
  } catch (error) {
    await worker?.stop().catch(() => {});
    await stack.stop();
    await removeStackDir(dir);
    throw error;
  }
}
