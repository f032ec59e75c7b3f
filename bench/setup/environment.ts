/**
 * What the benchmark runs against. By default it starts everything itself: the local stack in test mode
 * (redis-server, embedded Postgres, the Upstash REST, Neon HTTP and QStash stand-ins), migrations, and
 * the built worker in workerd through Miniflare (never `wrangler dev`, whose proxy is slow under load).
 * With `BENCH_WORKER_URL` set it uses a stack that is already running (e.g. `npm run dev`) instead.
 */
import { join, resolve } from "node:path";
import pg from "pg";
import { migrate } from "../../local/migrate";
import { startStack } from "../../local/stack";
import { buildWorker, exampleSecrets, startWorker, wranglerVars } from "../../local/worker-runtime";
import { descendants, findWorkerd, pidListeningOn } from "../measure/proc";

export type BenchEnvironment = {
  external: boolean;
  workerUrl: string;
  /** Direct URL of the redis-server (INFO commandstats, the direct script baseline). */
  redisUrl: string;
  /** The project's database, as a superuser (stats, the baseline's own database next to it). */
  databaseUrl: string;
  qstashUrl: string;
  qstashToken: string;
  jwtSecret: string;
  adminToken: string;
  /** The worker's settings that shape the crowd's outcomes. */
  vars: Record<string, string>;
  pids: { workerd: number | null; redis: number | null; postgres: number | null };
  stop(): Promise<void>;
};

const root = resolve(import.meta.dirname, "..", "..");

/** Rate limits for the run: a shopper may try 5 times in 10 s, so a hammering burst gets 429s. */
export const BENCH_LIMITS = {
  RATE_LIMIT_USER_PER_WINDOW: "5",
  RATE_LIMIT_WINDOW_SECONDS: "10",
  RATE_LIMIT_IP_PER_WINDOW: "50",
};

export async function startEnvironment(
  log: (line: string) => void,
  options: { worker?: boolean } = {},
): Promise<BenchEnvironment> {
  if (process.env.BENCH_WORKER_URL) return externalEnvironment();
  log("starting the local stack (test mode: free ports, temporary data) …");
  const stack = await startStack({ mode: "test", quiet: true });
  try {
    await enableStatementStats(
      stack.vars.DATABASE_URL,
      () => stack.postgres.stop(),
      () => stack.postgres.start(),
    );
    await migrate(stack.vars.DATABASE_URL);
    const vars: Record<string, string> = {
      ...wranglerVars(),
      ...exampleSecrets(),
      ...stack.vars,
      ...BENCH_LIMITS,
      // the realtime phase opens up to 10,000 watchers in one isolate, all from this machine's address:
      // the caps are what the runtime holds, not the defaults
      REALTIME_MAX_STREAMS: "20000",
      REALTIME_MAX_STREAMS_PER_IP: "20000",
    };
    // Without the Workers rows (`--runtimes deno,bun`) workerd is not started at all.
    const worker =
      options.worker === false ? null : await startWorker({ vars, outdir: await buildWorkerLogged(log) });
    const pgPort = Number(new URL(stack.vars.DATABASE_URL).port);
    const mine = descendants(process.pid).map((s) => s.pid);
    return {
      external: false,
      workerUrl: worker?.url ?? "",
      redisUrl: stack.redis.url,
      databaseUrl: stack.vars.DATABASE_URL,
      qstashUrl: stack.vars.QSTASH_URL,
      qstashToken: stack.vars.QSTASH_TOKEN,
      jwtSecret: vars.JWT_SECRET ?? "",
      adminToken: vars.ADMIN_TOKEN ?? "",
      vars,
      pids: {
        workerd: worker ? findWorkerd(worker.port) : null,
        redis: pidListeningOn(stack.redis.port, mine),
        postgres: pidListeningOn(pgPort, mine),
      },
      async stop() {
        await worker?.stop().catch(() => undefined);
        await stack.stop();
      },
    };
  } catch (error) {
    await stack.stop();
    throw error;
  }
}

function buildWorkerLogged(log: (line: string) => void): Promise<string> {
  log("building the worker bundle (wrangler deploy --dry-run) …");
  return buildWorker(join(root, ".wrangler", "bench"));
}

/** A running stack named by environment variables; secrets from `.dev.vars` / `.dev.vars.example`. */
function externalEnvironment(): BenchEnvironment {
  const secrets = { ...exampleSecrets(), ...process.env } as Record<string, string>;
  const env = (name: string, fallback: string) => process.env[name] ?? fallback;
  const workerUrl = env("BENCH_WORKER_URL", "http://127.0.0.1:8787");
  const redisUrl = env("BENCH_REDIS_URL", "redis://127.0.0.1:6390");
  const databaseUrl = env("BENCH_DATABASE_URL", secrets.DATABASE_URL ?? "");
  const port = (url: string, fallback: number) => Number(new URL(url).port || fallback);
  return {
    external: true,
    workerUrl,
    redisUrl,
    databaseUrl,
    qstashUrl: env("BENCH_QSTASH_URL", secrets.QSTASH_URL ?? "http://127.0.0.1:8080"),
    qstashToken: secrets.QSTASH_TOKEN ?? "",
    jwtSecret: secrets.JWT_SECRET ?? "",
    adminToken: secrets.ADMIN_TOKEN ?? "",
    vars: { ...wranglerVars(), ...pick(process.env, Object.keys(BENCH_LIMITS)) },
    pids: {
      workerd: pidListeningOn(port(workerUrl, 80)),
      redis: pidListeningOn(port(redisUrl, 6379)),
      postgres: pidListeningOn(port(databaseUrl, 5432)),
    },
    stop: async () => undefined,
  };
}

function pick(source: NodeJS.ProcessEnv, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) if (source[name]) out[name] = source[name] as string;
  return out;
}

/**
 * Loads pg_stat_statements into the stack's embedded Postgres (ALTER SYSTEM, then a restart), so the
 * bench counts statements, not only transactions. Skipped when it is already loaded.
 */
export async function enableStatementStats(
  databaseUrl: string,
  stop: () => Promise<void>,
  start: () => Promise<void>,
): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const loaded = await client.query<{ v: string }>(
      "select current_setting('shared_preload_libraries') as v",
    );
    if (loaded.rows[0]?.v.includes("pg_stat_statements")) return;
    await client.query("alter system set shared_preload_libraries = 'pg_stat_statements'");
  } finally {
    await client.end();
  }
  await stop();
  await start();
}
