/**
 * The local stand-in for Cloudflare's Cron Triggers: fires the worker's `scheduled` handler on the
 * schedule of wrangler.toml's `[triggers] crons` (five-field cron, UTC), as production does. `wrangler
 * dev` and Miniflare never fire crons by themselves; the caller says how to fire one: through
 * `/cdn-cgi/handler/scheduled?cron=…` (served by `wrangler dev` 4.x, which sets Miniflare's
 * `unsafeTriggerHandlers`) or `WorkerRuntime.scheduled(cron)` (Miniflare's `getWorker().scheduled`).
 * A run still going when the next one is due is not overlapped: that firing is skipped.
 *
 * @example
 * const cron = startCron({ fire: (expression) => worker.scheduled(expression) });
 * cron.stop();
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type CronTrigger, startCron as startCronOn } from "../src/runtime/cron-schedule";

const root = resolve(import.meta.dirname, "..");
/** The `[triggers] crons` of wrangler.toml. */
export function wranglerCrons(file = join(root, "wrangler.toml")): string[] {
  const section =
    readFileSync(file, "utf8")
      .split(/^\[triggers\]\s*$/m)[1]
      ?.split(/^\[/m)[0] ?? "";
  const list = /^crons\s*=\s*\[([^\]]*)\]/m.exec(section)?.[1] ?? "";
  return [...list.matchAll(/"([^"]*)"/g)].map((m) => m[1] as string);
}

export { type CronTrigger, matchesCron, nextCronTime } from "../src/runtime/cron-schedule";

/** Fires `fire(cron)` on wrangler.toml's crons (or `crons`) until `stop()`; see src/runtime/cron-schedule.ts. */
export function startCron(options: {
  fire: (cron: string) => Promise<unknown>;
  crons?: string[];
  intervalMs?: number;
  log?: (line: string) => void;
}): CronTrigger {
  return startCronOn({ ...options, crons: options.crons ?? wranglerCrons() });
}
