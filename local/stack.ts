/**
 * The whole local stand-in for the hosted services, in order: redis-server → Postgres → the Upstash
 * REST, Neon HTTP and QStash servers.
 *
 * - `dev`: the fixed ports of `.dev.vars.example` (redis 6390, Postgres 5440, Upstash REST 8079,
 *   QStash 8080, Neon HTTP 8081), data under `.local/`, tokens and signing keys read from `.dev.vars`
 *   (or `.dev.vars.example`), `DATABASE_URL` from the environment to use another Postgres, and
 *   `stop()` run on SIGINT/SIGTERM (then the process exits, unless someone else also listens).
 * - `test`: free ports, a temporary directory removed by `stop()`, fresh tokens, fast QStash retries.
 *
 * `vars` holds the worker's environment for this stack (same names as `.dev.vars.example`); the handles
 * serve fault tests: `redis.kill()`/`restart()`, `postgres.stop()`/`start()`, `qstash.pause()`, …
 *
 * @example
 * const stack = await startStack({ mode: "test", quiet: true });
 * const worker = await startWorker({ vars: { ...secrets, ...stack.vars } });
 * await stack.qstash.idle(10_000);
 * await stack.stop();
 */
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type NeonHttpServer, startNeonHttpServer } from "./neon-http-server";
import { type PostgresProcess, startPostgres } from "./postgres-process";
import type { Faults } from "./qstash-scheduler";
import { type QStashServer, startQStashServer } from "./qstash-server";
import { type RedisProcess, startRedis } from "./redis-process";
import { devSecrets, type Secrets, testSecrets } from "./stack-secrets";
import { type StripeServer, startStripeServer } from "./stripe-server";
import { startUpstashRedisServer, type UpstashRedisServer } from "./upstash-redis-server";

export type StackOptions = {
  mode: "dev" | "test";
  /** Where data lives; default `.local/` (dev) or a new temporary directory (test). */
  dir?: string;
  /** No progress lines on stdout. */
  quiet?: boolean;
  /** An external Postgres; default `$DATABASE_URL` in dev mode, none in test mode. */
  databaseUrl?: string;
  /** QStash tuning; test mode defaults to 100 ms backoff base. */
  qstash?: { retryBaseMs?: number; maxRetries?: number; faults?: Partial<Faults>; fetch?: typeof fetch };
  /** Stop the stack on SIGINT/SIGTERM; default true in dev mode. */
  handleSignals?: boolean;
  /**
   * The Stripe stand-in (local/stripe-server.ts), and the engine's PAYMENT_PROVIDER=stripe pointed at it:
   * always in dev mode (port 8082, webhooks to the engine at 8787); in test mode only when asked (else
   * PAYMENT_PROVIDER=local). Tests set the webhook URL once the engine is up (`stripe.webhooks.setUrl`).
   */
  stripe?: boolean | { webhookUrl?: string; retryBaseMs?: number };
};

/** The worker's environment for this stack, named as in `.dev.vars.example`. */
export type StackVars = {
  UPSTASH_REDIS_REST_URL: string;
  UPSTASH_REDIS_REST_TOKEN: string;
  QSTASH_URL: string;
  QSTASH_TOKEN: string;
  QSTASH_CURRENT_SIGNING_KEY: string;
  QSTASH_NEXT_SIGNING_KEY: string;
  DATABASE_URL: string;
  NEON_HTTP_ENDPOINT: string;
  PAYMENT_PROVIDER: "stripe" | "local";
  /** "true": the stack's webhook receivers listen on loopback, which the engine otherwise refuses. */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: "true";
  STRIPE_API_BASE?: string;
  STRIPE_SECRET_KEY?: string;
  STRIPE_WEBHOOK_SECRET?: string;
};

export type Stack = {
  mode: "dev" | "test";
  dir: string;
  vars: StackVars;
  redis: RedisProcess;
  postgres: PostgresProcess;
  upstash: UpstashRedisServer;
  neon: NeonHttpServer;
  qstash: QStashServer;
  /** The Stripe stand-in, when the stack runs one (see {@link StackOptions.stripe}). */
  stripe?: StripeServer;
  /** Stops everything this stack started (idempotent). */
  stop(): Promise<void>;
};

const root = resolve(import.meta.dirname, "..");
const DEV_PORTS = { redis: 6390, postgres: 5440, upstash: 8079, qstash: 8080, neon: 8081, stripe: 8082 };
const DEV_WEBHOOK_URL = "http://127.0.0.1:8787/api/payments/stripe/webhook";

export async function startStack(options: StackOptions): Promise<Stack> {
  const dev = options.mode === "dev";
  const log = (line: string) => options.quiet || console.log(`[stack] ${line}`);
  const ownDir = !dev && options.dir === undefined;
  const dir = options.dir ?? (dev ? join(root, ".local") : await mkdtemp(join(tmpdir(), "flashsale-stack-")));
  // As root, Postgres runs as the `postgres` user, which must be able to reach its directory inside.
  if (ownDir) await chmod(dir, 0o755);
  const secrets = dev ? devSecrets() : testSecrets();
  const databaseUrl = options.databaseUrl ?? (dev ? process.env.DATABASE_URL : undefined);
  const stops: Array<() => Promise<unknown>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    if (ownDir) await rm(dir, { recursive: true, force: true });
  };

  try {
    const redis = await startRedis({ port: dev ? DEV_PORTS.redis : 0, dir: join(dir, "redis") });
    stops.push(() => redis.stop());
    log(`redis-server on ${redis.url}`);
    const postgres = await startPostgres({
      port: dev ? DEV_PORTS.postgres : 0,
      dir: join(dir, "postgres"),
      durable: dev,
      ...(databaseUrl ? { databaseUrl } : {}),
    });
    stops.push(() => postgres.stop());
    log(
      `${postgres.external ? "external " : ""}Postgres at ${postgres.databaseUrl.replace(/:[^:@/]+@/, ":***@")}`,
    );
    const { upstash, neon, qstash } = await startStandIns(options, secrets, redis, postgres);
    stops.push(
      () => upstash.close(),
      () => neon.close(),
      () => qstash.close(),
    );
    log(`Upstash REST on ${upstash.url}, Neon HTTP on ${neon.url}, QStash on ${qstash.url}`);
    const stripe = await startStripeStandIn(options, secrets);
    if (stripe) {
      stops.push(() => stripe.close());
      log(`Stripe stand-in on ${stripe.url} (checkout pages at ${stripe.url}/c/pay/…)`);
    }

    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= stopAll();
      return stopping;
    };
    if (options.handleSignals ?? dev) stopOnSignals(stop);
    return {
      mode: options.mode,
      dir,
      vars: {
        ...stackVars(secrets, { upstash, qstash, neon, postgres }),
        ...(stripe
          ? {
              PAYMENT_PROVIDER: "stripe" as const,
              STRIPE_API_BASE: stripe.url,
              STRIPE_SECRET_KEY: secrets.STRIPE_SECRET_KEY,
              STRIPE_WEBHOOK_SECRET: secrets.STRIPE_WEBHOOK_SECRET,
            }
          : {}),
      },
      redis,
      postgres,
      upstash,
      neon,
      qstash,
      ...(stripe ? { stripe } : {}),
      stop,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** The Upstash REST, Neon HTTP and QStash stand-ins, started together once Redis and Postgres are up. */
async function startStandIns(
  options: StackOptions,
  secrets: Secrets,
  redis: RedisProcess,
  postgres: PostgresProcess,
) {
  const dev = options.mode === "dev";
  const [upstash, neon, qstash] = await Promise.all([
    startUpstashRedisServer({
      port: dev ? DEV_PORTS.upstash : 0,
      redisUrl: redis.url,
      token: secrets.UPSTASH_REDIS_REST_TOKEN,
    }),
    startNeonHttpServer({ port: dev ? DEV_PORTS.neon : 0, databaseUrl: postgres.databaseUrl }),
    startQStashServer({
      port: dev ? DEV_PORTS.qstash : 0,
      token: secrets.QSTASH_TOKEN,
      currentSigningKey: secrets.QSTASH_CURRENT_SIGNING_KEY,
      nextSigningKey: secrets.QSTASH_NEXT_SIGNING_KEY,
      retryBaseMs: options.qstash?.retryBaseMs ?? (dev ? 1_000 : 100),
      ...(options.qstash?.maxRetries !== undefined ? { maxRetries: options.qstash.maxRetries } : {}),
      ...(options.qstash?.faults ? { faults: options.qstash.faults } : {}),
      ...(options.qstash?.fetch ? { fetch: options.qstash.fetch } : {}),
    }),
  ]);
  return { upstash, neon, qstash };
}

/** The Stripe stand-in of {@link StackOptions.stripe}, or none. */
async function startStripeStandIn(
  options: StackOptions,
  secrets: Secrets,
): Promise<StripeServer | undefined> {
  const dev = options.mode === "dev";
  if (!dev && !options.stripe) return undefined;
  const asked = typeof options.stripe === "object" ? options.stripe : {};
  const webhookUrl = asked.webhookUrl ?? (dev ? DEV_WEBHOOK_URL : undefined);
  return startStripeServer({
    port: dev ? DEV_PORTS.stripe : 0,
    secretKey: secrets.STRIPE_SECRET_KEY,
    webhookSecret: secrets.STRIPE_WEBHOOK_SECRET,
    retryBaseMs: asked.retryBaseMs ?? (dev ? 1_000 : 100),
    ...(webhookUrl ? { webhookUrl } : {}),
    ...(options.quiet ? {} : { log: (line: string) => console.log(`[stripe] ${line}`) }),
  });
}

function stackVars(
  secrets: Secrets,
  s: { upstash: UpstashRedisServer; qstash: QStashServer; neon: NeonHttpServer; postgres: PostgresProcess },
): StackVars {
  return {
    UPSTASH_REDIS_REST_URL: s.upstash.url,
    UPSTASH_REDIS_REST_TOKEN: secrets.UPSTASH_REDIS_REST_TOKEN,
    QSTASH_URL: s.qstash.url,
    QSTASH_TOKEN: secrets.QSTASH_TOKEN,
    QSTASH_CURRENT_SIGNING_KEY: secrets.QSTASH_CURRENT_SIGNING_KEY,
    QSTASH_NEXT_SIGNING_KEY: secrets.QSTASH_NEXT_SIGNING_KEY,
    DATABASE_URL: s.postgres.databaseUrl,
    NEON_HTTP_ENDPOINT: s.neon.url,
    PAYMENT_PROVIDER: "local",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
  };
}

/** Runs `stop` on SIGINT/SIGTERM; exits afterwards when no other handler is there to do it. */
function stopOnSignals(stop: () => Promise<void>): void {
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    const handler = () => {
      const alone = process.listenerCount(signal) === 0;
      void stop().finally(() => alone && process.exit(code));
    };
    process.once(signal, handler);
  }
}
