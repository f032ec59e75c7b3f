/**
 * The TCP store adapters on each server runtime: test/support/store-smoke.ts run by Node, Bun and
 * Deno (from the npm packages) against one redis-server and one Postgres, each printing what it saw.
 * The same lines, bar the runtime's name, mean the same replies everywhere.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresProcess, startPostgres } from "../../../local/postgres-process";
import { type RedisProcess, startRedis } from "../../../local/redis-process";

const run = promisify(execFile);
const bin = (name: string) => join("node_modules", ".bin", name);
const smoke = "test/support/store-smoke.ts";
const runtimes: Record<string, [string, string[]]> = {
  node: [bin("tsx"), [smoke]],
  bun: [bin("bun"), [smoke]],
  deno: [bin("deno"), ["run", "-A", smoke]],
};

let dir: string;
let redis: RedisProcess;
let postgres: PostgresProcess;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flashsale-runtimes-test-"));
  redis = await startRedis({ port: 0 });
  postgres = await startPostgres({ port: 0, dir, durable: false });
}, 60_000);

afterAll(async () => {
  await redis?.stop();
  await postgres?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.each(Object.keys(runtimes))("the TCP stores on %s", (runtime) => {
  it("answer scripts, pipelines, transactions and conflicts as on every runtime", async () => {
    const [command, args] = runtimes[runtime] as [string, string[]];
    const { stdout } = await run(command, args, {
      env: { ...process.env, REDIS_URL: redis.url, DATABASE_URL: postgres.databaseUrl },
      timeout: 60_000,
    });
    const seen = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
    expect(seen).toEqual({
      runtime,
      first: [2, "a"],
      record: { f: "v" },
      piped: ["2", 1],
      atomic: [3, "v"],
      tx: [[{ id: 1, at: "2030-01-02 03:04:05+00" }], [{ n: 1 }]],
      conflict: "conflict",
    });
  }, 90_000);
});
