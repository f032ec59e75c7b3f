import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Scenario } from "../scenario";

const root = join(import.meta.dirname, "../..");

/** Whether src/ has the Redis-loss recovery yet (a commit about it and a rebuild in the code). */
function recoveryPresent(): boolean {
  const log = execFileSync("git", ["log", "--oneline", "-i", "--grep=redis loss"], { cwd: root }).toString();
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) =>
      statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)],
    );
  const rebuild = files(join(root, "src")).some((f) => /rebuild/i.test(readFileSync(f, "utf8")));
  return log.trim().length > 0 && rebuild;
}

/**
 * Redis killed and restarted empty mid-sale (the failover that loses acknowledged writes).
 *
 * TODO(redis-loss): the recovery lives in src/ (lead's work): after Redis comes back empty the worker
 * must answer 503 UNAVAILABLE or 409 SALE_PAUSED for the sale and never sell a unit twice, and an
 * operator call or the cron must rebuild stock, holdings and ledger from Postgres plus the jobs in
 * flight. Once that lands (and the admin route is named), this scenario will: run the workload, kill
 * Redis and restart it empty, check every buy answer during the gap is 503 or SALE_PAUSED, call the
 * rebuild route (or run the cron), let the workload resume, and run the checker with
 * `redisRebuilt: true` (idempotency answers and finished ledger entries are gone after the loss).
 */
export const redisLoss: Scenario = {
  name: "redis-loss",
  title: "Redis killed and restarted empty mid-sale, then rebuilt from Postgres",
  checkOptions: { redisRebuilt: true },
  async skip() {
    return recoveryPresent()
      ? "TODO: recovery is in src/ now; write the scenario body against its rebuild route"
      : "TODO: waits for the Redis-loss recovery in src/ (rebuild from Postgres)";
  },
  async run() {
    throw new Error("not written yet: see the TODO above");
  },
};
