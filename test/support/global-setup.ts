import { buildServer } from "../../local/server-runtime";
import { ensureSystemPackages } from "../../local/system-packages";
import { buildWorker } from "../../local/worker-runtime";
import { testRuntime } from "./test-runtime";

/**
 * Installs what the tests need from Debian when it is missing (redis-server, Chromium, a font for
 * readable screenshots), then builds the worker bundle once for every integration test (the same build
 * `wrangler deploy` makes), and the server bundles (Deno, Bun) the runtime tests and FLASH_RUNTIME use.
 */
export default async function setup(): Promise<void> {
  ensureSystemPackages(["redis-server", "chromium", "fonts-liberation"], { for: "npm test" });
  await buildWorker();
  await Promise.all([buildServer("deno"), buildServer("bun")]);
  void testRuntime(); // refuse a wrong FLASH_RUNTIME before any test starts
}
