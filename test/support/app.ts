import { Redis } from "ioredis";
import pg from "pg";
import { migrate } from "../../local/migrate";
import { type Stack, startStack } from "../../local/stack";
import { exampleSecrets, startWorker, type WorkerRuntime, wranglerVars } from "../../local/worker-runtime";
import { type ApiClient, apiClient } from "./api";

export type AppUnderTest = {
  stack: Stack;
  worker: WorkerRuntime;
  api: ApiClient;
  /** A direct connection to the stack's redis-server (inspection only: the worker goes through REST). */
  redis: Redis;
  /** A direct pool on the stack's Postgres (inspection only). */
  db: pg.Pool;
  /** Waits until every QStash delivery due within `timeoutMs` is done (delivered or dead-lettered). */
  drain(timeoutMs?: number): Promise<void>;
  /** Reopens the inspection connection after Redis restarted. */
  reconnect(): Promise<void>;
  stop(): Promise<void>;
};

/**
 * The whole product on real servers: redis-server behind the Upstash REST stand-in, Postgres behind the
 * Neon HTTP stand-in, the QStash stand-in, migrations applied, and the built worker in workerd.
 */
export async function startApp(opts: { vars?: Record<string, string> } = {}): Promise<AppUnderTest> {
  const stack = await startStack({ mode: "test", quiet: true });
  try {
    await migrate(stack.vars.DATABASE_URL);
    const worker = await startWorker({
      vars: { ...wranglerVars(), ...exampleSecrets(), ...stack.vars, ...opts.vars },
    });
    let redis = new Redis(stack.redis.url, { maxRetriesPerRequest: 1 });
    const db = new pg.Pool({ connectionString: stack.vars.DATABASE_URL, max: 4 });
    // Idle clients see the server go away in the Postgres fault tests; that is expected, not a failure.
    db.on("error", () => {});
    return {
      stack,
      worker,
      api: apiClient(worker.url),
      get redis() {
        return redis;
      },
      db,
      async drain(timeoutMs = 20_000) {
        // the worker publishes in waitUntil, a few milliseconds after it answered: let that arrive first
        await new Promise((r) => setTimeout(r, 100));
        await stack.qstash.idle(timeoutMs);
      },
      async reconnect() {
        redis.disconnect();
        redis = new Redis(stack.redis.url, { maxRetriesPerRequest: 1 });
      },
      async stop() {
        redis.disconnect();
        await db.end().catch(() => {});
        await worker.stop().catch(() => {});
        await stack.stop();
      },
    };
  } catch (error) {
    await stack.stop();
    throw error;
  }
}
