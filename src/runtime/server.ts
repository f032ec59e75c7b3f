import type { MiddlewareHandler } from "hono";
import { createApp } from "../app";
import { type Env, readConfig } from "../env";
import { sweep } from "../recovery/sweep";
import type { MetricsExposition } from "../routes/metrics";
import { depsAt, type Services } from "../services";
import { lookupHost } from "../stores/host-lookup";
import { connectPostgresTcp } from "../stores/postgres-tcp";
import { connectRedisCluster, connectRedisTcp } from "../stores/redis-tcp";
import { buyFrontDoor } from "./buy-front-door";
import { createServices } from "./create-services";
import { type CronTrigger, startCron } from "./cron-schedule";
import { settlesWithin } from "./deadline";
import { createPromMetrics } from "./prom-metrics";
import { clientAddress, readServerSettings, type ServerSettings } from "./server-settings";
import { parseHeadersFile, type ServeStaticOptions, staticSite } from "./static-site";
import { createTaskSet, type TaskSet } from "./task-set";
import type { TracingHandle } from "./tracing-sdk";

/** What a server entry passes to the app with each request: the socket's address. */
export type SocketInfo = { remoteAddress?: string };

/**
 * The engine on a server runtime (Deno, Bun), from its environment variables: the services built once,
 * the process's task set for background work, `public/` with `_headers`, the scheduled handler (the
 * sweeper, reconciliation, overdue expiry: the Workers Cron Trigger's work) on CRON_SCHEDULE, and a
 * shutdown that stops taking requests, then finishes the background work (pending publishes) before
 * the process exits. The entries only wire it to `Deno.serve` / `Bun.serve` and the signals.
 *
 * @example
 * const engine = createServerEngine(Deno.env.toObject(), { headersFile, serveStatic });
 * Deno.serve({ port: engine.settings.PORT }, (req, info) => engine.fetch(req, { remoteAddress: info.remoteAddr.hostname }));
 */
export function createServerEngine(
  env: Record<string, string | undefined>,
  options: {
    headersFile: string;
    serveStatic: (options: ServeStaticOptions) => MiddlewareHandler;
    /** this runtime's defaults for engine settings the environment leaves unset (stream budgets) */
    defaults?: Record<string, string>;
    /** this runtime's tracing (src/runtime/tracing-sdk.ts): started before the services, or null (off) */
    tracing?: (settings: ServerSettings) => TracingHandle | null;
  },
) {
  const settings: ServerSettings = readServerSettings(env);
  const tracing = options.tracing?.(settings) ?? null;
  const prom = createPromMetrics();
  const services = createServices(readConfig({ ...options.defaults, ...env } as unknown as Env), {
    tcp: {
      redis: (url, o) => connectRedisTcp(url, o),
      redisCluster: (seeds, o) => connectRedisCluster(seeds, o),
      postgres: (url) => connectPostgresTcp(url, { max: settings.PG_POOL_MAX }),
    },
    resolveHost: lookupHost,
    metrics: prom.metrics,
  });
  prom.watch(services.memory);
  console.log(`stores: redis ${services.drivers.redis}, postgres ${services.drivers.db}`);
  const tasks = createTaskSet();
  const app = serverApp(settings, services, tasks, {
    ...options,
    metrics: prom.exposition,
    httpSpans: tracing?.httpSpans,
  });

  const scheduled = scheduledRunner(() => sweep(depsAt(services, tasks.defer)));

  let cron: CronTrigger | null = null;
  let stopping: Promise<void> | null = null;
  return {
    settings,
    /** A buy refused from memory at the front door (src/runtime/buy-front-door.ts), anything else by the app. */
    fetch: (request: Request, info: SocketInfo) => {
      const door = buyFrontDoor(request, () => services, tasks.defer);
      return door ? door.then((answer) => answer ?? app.fetch(request, info)) : app.fetch(request, info);
    },
    runScheduled: scheduled.run,
    /** Starts the timer for CRON_SCHEDULE (runtimes without a cron of their own). */
    startTimer(): void {
      if (settings.CRON_SCHEDULE !== "off")
        cron = startCron({ crons: [settings.CRON_SCHEDULE], fire: () => scheduled.run("cron") });
    },
    /**
     * Stops the process's work in order: no new requests (`stopServing`, given the grace period for open
     * streams), no new scheduled runs, then every background task and a running sweep finish, then the
     * connections close, all within SHUTDOWN_DRAIN_MS (then it resolves anyway: orders whose publish was
     * still pending are in the outbox). Idempotent.
     */
    shutdown(stopServing: () => Promise<unknown>): Promise<void> {
      stopping ??= (async () => {
        cron?.stop();
        await Promise.race([
          stopServing().catch(() => undefined),
          new Promise((r) => setTimeout(r, settings.SHUTDOWN_GRACE_MS)),
        ]);
        const finished = async () => {
          await scheduled.idle();
          await tasks.drain();
          await services.close();
          await tracing?.shutdown().catch(() => undefined);
        };
        if (!(await settlesWithin(settings.SHUTDOWN_DRAIN_MS, finished())))
          console.warn(
            `shutdown: ${tasks.size()} background task(s) still running after ${settings.SHUTDOWN_DRAIN_MS} ms; exiting (pending orders stay in the outbox)`,
          );
      })();
      return stopping;
    },
  };
}

export type ServerEngine = ReturnType<typeof createServerEngine>;

/** The app on a server: the process's services and task set, the socket's address, `public/` with `_headers`. */
function serverApp(
  settings: ServerSettings,
  services: Services,
  tasks: TaskSet,
  options: {
    headersFile: string;
    serveStatic: (options: ServeStaticOptions) => MiddlewareHandler;
    metrics: MetricsExposition;
    httpSpans?: MiddlewareHandler;
  },
) {
  return createApp({
    httpSpans: options.httpSpans,
    services: () => services,
    defer: () => tasks.defer,
    clientIp: (c) =>
      clientAddress(
        settings,
        (name) => c.req.header(name),
        () => (c.env as SocketInfo | undefined)?.remoteAddress,
      ),
    assets: staticSite({
      root: settings.PUBLIC_DIR,
      rules: parseHeadersFile(options.headersFile),
      serve: options.serveStatic,
    }),
    metrics: options.metrics,
  });
}

/**
 * Runs the scheduled handler now, or once more right after the run in progress (never two at once);
 * logs each run's report. The returned promise settles when the runs it asked for are done.
 */
function scheduledRunner(run: () => Promise<unknown>) {
  let running: Promise<void> | null = null;
  let again = false;
  const runScheduled = (trigger: string): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        const report = await run().catch((error) => {
          console.error("sweep", error);
          return null;
        });
        console.log(`sweep ${JSON.stringify({ trigger, report })}`);
      } while (again);
    })().finally(() => {
      running = null;
    });
    return running;
  };
  return { run: runScheduled, idle: async () => void (await running) };
}
