import { buildWorker } from "../../local/worker-runtime";

/** Builds the worker bundle once for every integration test (the same build `wrangler deploy` makes). */
export default async function setup(): Promise<void> {
  await buildWorker();
}
