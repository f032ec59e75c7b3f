import { Redis } from "ioredis";
import pg from "pg";
import { enableStatementStats } from "../../bench/setup/environment";
import { migrate } from "../../local/migrate";
import type { RedisProcess } from "../../local/redis-process";
import { startServer } from "../../local/server-runtime";
import { type Stack, startStack } from "../../local/stack";
import { exampleSecrets, startWorker, type WorkerRuntime, wranglerVars } from "../../local/worker-runtime";
import { type ApiClient, apiClient } from "./api";
import { removeStackDir, stackDirFromTemplate } from "./postgres-template";
import { type StoreLayout, startStoreLayout } from "./store-layouts";
import { type RuntimeName, testRuntime } from "./test-runtime";

export { type RuntimeName, testRuntime };

/**
 * Settings a server runtime gets in the tests besides the worker's: it trusts CF-Connecting-IP, as a
 * server behind Cloudflare would (TRUST_PROXY_HEADER), so the contract's per-IP tests mean the same;
 * and it talks TCP to redis-server and Postgres (REDIS_URL, DATABASE_DRIVER=tcp) unless FLASH_STORES=rest
 * (then the Upstash REST and Neon HTTP stand-ins, as Deno Deploy would).
 */
export function serverTestVars(stack: Stack): Record<string, string> {
  const tcp = (process.env.FLASH_STORES ?? "tcp") === "tcp";
  return {
    TRUST_PROXY_HEADER: "CF-Connecting-IP",
    ...(tcp ? { REDIS_URL: stack.redis.url, DATABASE_DRIVER: "tcp" } : {}),
  };
}

export type AppUnderTest = {
  stack: Stack;
  runtime: RuntimeName;
  /** The engine (named worker for history): workerd through Miniflare, or a Deno or Bun process. */
  worker: WorkerRuntime;
  api: ApiClient;
  /**
   * Starts one more engine process of the same runtime on this stack, with the same settings (and
   * `vars` over them): a separate workerd, Deno or Bun process with its own memory (catalog, caches,
   * batches), as a second instance behind a load balancer. Stopped with the app.
   */
  startEngine(opts?: { vars?: Record<string, string> }): Promise<EngineUnderTest>;
  /**
   * A direct connection to the stack's redis-server (inspection only: the worker goes through REST), or
   * to every store of a layout of several (test/support/store-layouts.ts).
   */
  redis: Redis;
  /** The redis-servers holding the engine's data: the stack's one, or a layout's (to stop, restart, kill). */
  storeServers: RedisProcess[];
  /** A direct pool on the stack's Postgres (inspection only). */
  db: pg.Pool;
  /** Waits until every QStash delivery due within `timeoutMs` is done (delivered or dead-lettered). */
  drain(timeoutMs?: number): Promise<void>;
  /** Reopens the inspection connection after Redis restarted. */
  reconnect(): Promise<void>;
  stop(): Promise<void>;
};

/** One engine process of an {@link AppUnderTest}: its server and a client of it. */
export type EngineUnderTest = { worker: WorkerRuntime; api: ApiClient };

/**
 * The whole product on real servers: redis-server behind the Upstash REST stand-in, Postgres behind the
 * Neon HTTP stand-in, the QStash stand-in, migrations applied, and the engine on `runtime` (default
 * FLASH_RUNTIME, else workers): the built worker in workerd, or the bundled server on Deno or Bun.
 * Behind proxies: `publicUrl` is the engine's PUBLIC_URL (a TLS proxy in front of it, whose certificate
 * `qstashFetch` trusts), and `beforeEngine` runs once the stack is up, its settings going to the engine
 * last (e.g. REDIS_URL and DATABASE_URL through stalling proxies). With `statementStats`, Postgres
 * loads pg_stat_statements (see {@link statementCalls}).
 */
export async function startApp(
  opts: {
    vars?: Record<string, string>;
    runtime?: RuntimeName;
    publicUrl?: string;
    qstashFetch?: typeof fetch;
    beforeEngine?: (stack: Stack) => Promise<Record<string, string>>;
    statementStats?: boolean;
    /** Run the Stripe stand-in (stack.stripe) with PAYMENT_PROVIDER=stripe; else the provider is `local`. */
    stripe?: boolean;
    /**
     * The file stops, pauses or restarts the stack's one redis-server, or starts engines of its own on
     * it: it keeps that server when the suite runs over several stores (FLASH_STORES_LAYOUT).
     */
    oneServer?: boolean;
    /** Several stores for this file whatever FLASH_STORES_LAYOUT says (test/support/store-layouts.ts). */
    layout?: "cluster" | "databases";
  } = {},
): Promise<AppUnderTest> {
  const runtime = opts.runtime ?? testRuntime();
  let layout: StoreLayout | null = null;
  const dir = await stackDirFromTemplate();
  const stack = await startStack({
    mode: "test",
    quiet: true,
    ...(dir ? { dir } : {}),
    ...(opts.qstashFetch ? { qstash: { fetch: opts.qstashFetch } } : {}),
    ...(opts.stripe ? { stripe: true } : {}),
  }).catch(async (error: unknown) => {
    await removeStackDir(dir);
    throw error;
  });
  try {
    if (opts.statementStats)
      await enableStatementStats(
        stack.vars.DATABASE_URL,
        () => stack.postgres.stop(),
        () => stack.postgres.start(),
      );
    await migrate(stack.vars.DATABASE_URL);
    const vars = { ...wranglerVars(), ...exampleSecrets(), ...stack.vars };
    const late: Record<string, string> = { ...opts.vars, ...(await opts.beforeEngine?.(stack)) };
    // the suite over several stores (FLASH_STORES_LAYOUT: a Redis Cluster, several Upstash databases)
    layout = await startStoreLayout(runtime, stack, late, opts);
    Object.assign(late, layout?.vars);
    const serverVars = serverTestVars(stack);
    // an engine given a Redis Cluster (REDIS_CLUSTER_NODES) or several Upstash databases must not also
    // get the stack's one server
    if (late.REDIS_CLUSTER_NODES || late.UPSTASH_REDIS_REST_URLS) delete serverVars.REDIS_URL;
    const engineVars = runtime === "workers" ? { ...vars, ...late } : { ...vars, ...serverVars, ...late };
    const launch = (more: Record<string, string>, publicUrl: string | undefined) =>
      runtime === "workers"
        ? startWorker({ vars: { ...engineVars, ...more }, ...(publicUrl ? { publicUrl } : {}) })
        : startServer({ runtime, vars: { ...engineVars, ...more }, ...(publicUrl ? { publicUrl } : {}) });
    const worker = await launch({}, opts.publicUrl);
    const others: WorkerRuntime[] = [];
    stack.stripe?.webhooks.setUrl(`${worker.url}/api/payments/stripe/webhook`);
    const inspect = (): Redis =>
      layout ? layout.inspect() : new Redis(stack.redis.url, { maxRetriesPerRequest: 1 });
    let redis = inspect();
    const db = new pg.Pool({ connectionString: stack.vars.DATABASE_URL, max: 4 });
    // Idle clients see the server go away in the Postgres fault tests; that is expected, not a failure.
    db.on("error", () => {});
    db.on("connect", (client) => client.on("error", () => {}));
    return {
      stack,
      runtime,
      worker,
      api: apiClient(worker.url),
      storeServers: layout?.servers ?? [stack.redis],
      async startEngine(more = {}) {
        const other = await launch(more.vars ?? {}, undefined);
        others.push(other);
        return { worker: other, api: apiClient(other.url) };
      },
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
        redis = inspect();
      },
      async stop() {
        redis.disconnect();
        await db.end().catch(() => {});
        await Promise.all(others.map((other) => other.stop().catch(() => {})));
        await worker.stop().catch(() => {});
        await stack.stop();
        await layout?.stop();
        await removeStackDir(dir);
      },
    };
  } catch (error) {
    await stack.stop();
    await layout?.stop();
    await removeStackDir(dir);
    throw error;
  }
}
