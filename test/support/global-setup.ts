import { buildServer } from "../../local/server-runtime";
import { ensureSystemPackages } from "../../local/system-packages";
import { buildWorker } from "../../local/worker-runtime";
import { makePostgresTemplate } from "./postgres-template";
import { testRuntime } from "./test-runtime";

/**
 * Installs what the tests need from Debian when it is missing (redis-server, Chromium, a font for
 * readable screenshots, Prometheus for the metrics scrape), then builds the worker bundle once for every integration test (the same build
 * `wrangler deploy` makes), the server bundles (Deno, Bun) the runtime tests and FLASH_RUNTIME use, and
 * the Postgres cluster every stack starts from (test/support/postgres-template.ts).
 */
export default async function setup(): Promise<() => Promise<void>> {
  // vitest runs a global setup once per project (workers, deno, bun, and the root): prepare once a run
  const run = globalThis as { flashSaleTestSetup?: Promise<() => Promise<void>> };
  run.flashSaleTestSetup ??= prepare();
  const removeTemplate = await run.flashSaleTestSetup;
  return removeTemplate;
}

async function prepare(): Promise<() => Promise<void>> {
  ensureSystemPackages(["redis-server", "chromium", "fonts-liberation", "prometheus"], { for: "npm test" });
  const builds = async () => {
    await buildWorker();
    await Promise.all([buildServer("deno"), buildServer("bun")]);
  };
  const [, removeTemplate] = await Promise.all([builds(), makePostgresTemplate()]);
  void testRuntime(); // refuse a wrong FLASH_RUNTIME before any test starts
  return removeTemplate;
}
