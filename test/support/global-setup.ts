import { ensureSystemPackages } from "../../local/system-packages";
import { buildWorker } from "../../local/worker-runtime";

/**
 * Installs what the tests need from Debian when it is missing (redis-server, Chromium, a font for
 * readable screenshots), then builds the worker bundle once for every integration test (the same build
 * `wrangler deploy` makes).
 */
export default async function setup(): Promise<void> {
  ensureSystemPackages(["redis-server", "chromium", "fonts-liberation"], { for: "npm test" });
  await buildWorker();
}
