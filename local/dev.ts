/**
 * `npm run dev`: the whole product on this machine, no cloud account. Starts a fresh local stack
 * (redis-server, Postgres, the Upstash / Neon / QStash stand-ins), applies the migrations, runs the
 * worker with `wrangler dev`, fires its Cron Trigger on wrangler.toml's schedule as production does
 * (local/cron.ts: the sweeper, reconciliation and overdue expiry), creates a demo sale (1,000 units,
 * limit 2 per user, live now), starts a local webhook receiver registered for every event
 * (local/webhook-receiver.ts: it verifies and prints each delivery) and prints how to use it. Ctrl-C stops every process it started. Data under `.local/` is reset at each start.
 *
 * `npm run dev:deno` / `npm run dev:bun` (`--runtime deno|bun`): the same stack with the engine on Deno or
 * Bun instead (the bundle of src/runtime/<runtime>.ts, local/server-runtime.ts), its own cron
 * (`Deno.cron`, a timer on Bun) on wrangler.toml's schedule, settings from .dev.vars as environment variables.
 * With `-- --stores 3` (and `--replicas 1`), their Redis is a real Redis Cluster of three masters; on
 * Workers, `npm run dev -- --stores 3` gives the worker three Upstash stand-ins, each on its own
 * redis-server (UPSTASH_REDIS_REST_URLS), each sale in one of them.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type CronTrigger, startCron, wranglerCrons } from "./cron";
import { createDemoSale, printInstructions } from "./dev-demo";
import { migrate } from "./migrate";
import { waitFor } from "./ports";
import { type RedisCluster, startRedisCluster } from "./redis-cluster";
import { RedisNotInstalledError, startRedis } from "./redis-process";
import { buildServer, type ServerRuntime, type ServerRuntimeName, startServer } from "./server-runtime";
import { type Stack, startStack } from "./stack";
import { ensureSystemPackages, MissingSystemPackagesError } from "./system-packages";
import { startUpstashRedisServer } from "./upstash-redis-server";
import { readVarsFile } from "./vars-file";
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver";

const root = resolve(import.meta.dirname, "..");
const WORKER_PORT = 8787;
const workerUrl = `http://127.0.0.1:${WORKER_PORT}`;

/** `--runtime workers|deno|bun` (default workers). */
function runtimeOption(): "workers" | ServerRuntimeName {
  const i = process.argv.indexOf("--runtime");
  const name = i >= 0 ? process.argv[i + 1] : "workers";
  if (name !== "workers" && name !== "deno" && name !== "bun")
    throw new Error(`--runtime ${name}: expected workers, deno or bun`);
  return name;
}

/**
 * `--stores N` (default 1) and `--replicas R` (default 0). On Deno and Bun, N > 1 starts a Redis Cluster
 * of N masters with R replicas each (local/redis-cluster.ts) instead of the stack's one redis-server; on
 * Workers, N Upstash databases (the stack's and N - 1 more stand-ins, each on its own redis-server).
 */
function storesOption(runtime: "workers" | ServerRuntimeName): { masters: number; replicas: number } {
  const count = (flag: string, fallback: number) => {
    const i = process.argv.indexOf(flag);
    if (i < 0) return fallback;
    const value = Number(process.argv[i + 1]);
    if (!Number.isInteger(value) || value < 0 || value > 16)
      throw new Error(`${flag} ${process.argv[i + 1] ?? ""}: expected a whole number from 0 to 16`);
    return value;
  };
  const masters = count("--stores", 1);
  const replicas = count("--replicas", 0);
  if (masters < 1) throw new Error("--stores: at least 1");
  if (runtime === "workers") {
    if (replicas > 0)
      throw new Error("--replicas: Upstash keeps its own replicas (Workers take --stores alone)");
    return { masters, replicas };
  }
  if (masters === 1 && replicas > 0) throw new Error("--replicas needs --stores 3 or more (a Redis Cluster)");
  if (masters > 1 && masters < 3) throw new Error("--stores: a Redis Cluster needs at least 3 masters");
  return { masters, replicas };
}

/**
 * `count` more Upstash databases beside the stack's: a redis-server under `.local/` and a REST stand-in
 * on it for each, with the stack's token. Answers the worker's settings for all of them.
 */
async function startMoreUpstash(dev: Dev, stack: Stack, count: number): Promise<Record<string, string>> {
  const token = stack.vars.UPSTASH_REDIS_REST_TOKEN;
  const urls = [stack.vars.UPSTASH_REDIS_REST_URL];
  for (let i = 0; i < count; i++) {
    const redis = await startRedis({ dir: join(root, ".local", `redis-store-${i + 2}`) });
    dev.moreStores.push({ stop: () => redis.stop() });
    const upstash = await startUpstashRedisServer({ redisUrl: redis.url, token });
    dev.moreStores.push({ stop: () => upstash.close() });
    urls.push(upstash.url);
  }
  return {
    UPSTASH_REDIS_REST_URLS: urls.join(","),
    UPSTASH_REDIS_REST_TOKENS: urls.map(() => token).join(","),
  };
}

/** Every setting of .dev.vars (the server runtimes get them as environment variables). */
function devVars(): Record<string, string> {
  return readVarsFile(join(root, ".dev.vars"));
}

function ensureDevVars(): void {
  const target = join(root, ".dev.vars");
  if (!existsSync(target)) {
    copyFileSync(join(root, ".dev.vars.example"), target);
    console.log("[dev] created .dev.vars from .dev.vars.example");
  }
}

/** A value from .dev.vars (what `wrangler dev` reads). */
function devVar(name: string): string {
  const match = new RegExp(`^${name}=(.*)$`, "m").exec(readFileSync(join(root, ".dev.vars"), "utf8"));
  if (!match?.[1]) throw new Error(`${name} is missing from .dev.vars`);
  return match[1].trim();
}

function startWrangler(vars: Record<string, string>): ChildProcess {
  const args = ["dev", "--port", String(WORKER_PORT), "--ip", "127.0.0.1", "--test-scheduled"];
  for (const [key, value] of Object.entries(vars)) args.push("--var", `${key}:${value}`);
  return spawn(join(root, "node_modules", ".bin", "wrangler"), args, {
    cwd: root,
    detached: true,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
  });
}

/** Fires the Cron Trigger through `wrangler dev` (its `/cdn-cgi/handler/scheduled` route; 500 if it threw). */
async function fireScheduled(cron: string): Promise<void> {
  const res = await fetch(`${workerUrl}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent(cron)}`);
  if (!res.ok) throw new Error(`scheduled handler answered ${res.status}: ${await res.text()}`);
}

/** What the dev command started, so that Ctrl-C (or a part exiting) stops all of it. */
type Dev = {
  stack?: Stack;
  wrangler?: ChildProcess;
  server?: ServerRuntime;
  cron?: CronTrigger;
  receiver?: WebhookReceiver;
  cluster?: RedisCluster;
  /** the extra Upstash databases of `--stores N` on Workers (stand-ins first, then their redis-servers) */
  moreStores: { stop(): Promise<void> }[];
  stopping: boolean;
};

async function main(): Promise<void> {
  ensureDevVars();
  await rm(join(root, ".local"), { recursive: true, force: true });
  const dev: Dev = { stopping: false, moreStores: [] };
  const runtime = runtimeOption();
  stopOnSignals(dev);
  try {
    const stores = storesOption(runtime);
    ensureSystemPackages(["redis-server"], { for: "dev" });
    const stack = await startStack({ mode: "dev", handleSignals: false });
    dev.stack = stack;
    await migrate(stack.vars.DATABASE_URL);
    console.log("[dev] migrations applied");
    let moreVars: Record<string, string> = {};
    if (stores.masters > 1 && runtime === "workers") {
      moreVars = await startMoreUpstash(dev, stack, stores.masters - 1);
      console.log(`[dev] ${stores.masters} Upstash databases: ${moreVars.UPSTASH_REDIS_REST_URLS}`);
    } else if (stores.masters > 1) {
      dev.cluster = await startRedisCluster({ ...stores, dir: join(root, ".local", "redis-cluster") });
      console.log(
        `[dev] a Redis Cluster of ${stores.masters} masters, ${stores.replicas} replica(s) each: ${dev.cluster.urls.join(",")}`,
      );
    }
    if (runtime === "workers") await startOnWorkers(dev, stack, moreVars);
    else await startOnServer(dev, stack, runtime, dev.cluster);
    const adminToken = devVar("ADMIN_TOKEN");
    dev.receiver = await startWebhookReceiver(workerUrl, adminToken);
    console.log(
      `[dev] webhook receiver at ${dev.receiver.url} (endpoint ${dev.receiver.endpointId}) prints every event`,
    );
    printInstructions(workerUrl, runtime, await createDemoSale(workerUrl, adminToken), adminToken);
  } catch (error) {
    if (error instanceof RedisNotInstalledError || error instanceof MissingSystemPackagesError) {
      console.error(`[dev] ${error.message}`);
    } else {
      console.error(`[dev] failed to start: ${error instanceof Error ? error.message : String(error)}`);
    }
    await stop(dev, 1);
  }
}

async function stop(dev: Dev, code: number): Promise<void> {
  if (dev.stopping) return;
  dev.stopping = true;
  dev.cron?.stop();
  await dev.receiver?.close().catch(() => {});
  await dev.server?.stop().catch(() => {});
  if (dev.wrangler?.pid) {
    try {
      process.kill(-dev.wrangler.pid, "SIGTERM");
    } catch {}
  }
  await dev.stack?.stop().catch(() => {});
  await dev.cluster?.stop().catch(() => {});
  for (const store of dev.moreStores.reverse()) await store.stop().catch(() => {});
  process.exit(code);
}

function stopOnSignals(dev: Dev): void {
  process.on("SIGINT", () => void stop(dev, 0));
  process.on("SIGTERM", () => void stop(dev, 0));
  process.on("exit", () => {
    if (dev.wrangler?.pid) {
      try {
        process.kill(-dev.wrangler.pid, "SIGKILL");
      } catch {}
    }
  });
}

/** `wrangler dev` on the stack, and the local Cron Trigger firing its scheduled handler. */
async function startOnWorkers(dev: Dev, stack: Stack, moreVars: Record<string, string>): Promise<void> {
  const wrangler = startWrangler({ ...stack.vars, ...moreVars, PUBLIC_URL: workerUrl });
  dev.wrangler = wrangler;
  wrangler.once("exit", (code) => {
    if (!dev.stopping) {
      console.error(`[dev] wrangler dev exited (${code}); stopping`);
      void stop(dev, 1);
    }
  });
  await waitFor(async () => (await fetch(`${workerUrl}/api/health`).catch(() => null))?.ok === true, {
    timeoutMs: 60_000,
    what: "wrangler dev",
  });
  dev.cron = startCron({ fire: fireScheduled, log: (line) => console.error(`[dev] ${line}`) });
}

/**
 * The engine's bundle on Deno or Bun, talking TCP to the stack's redis-server (or to `cluster`, when
 * several stores were asked for) and Postgres.
 */
async function startOnServer(
  dev: Dev,
  stack: Stack,
  runtime: ServerRuntimeName,
  cluster: RedisCluster | undefined,
): Promise<void> {
  await buildServer(runtime);
  const server = await startServer({
    runtime,
    port: WORKER_PORT,
    vars: {
      ...devVars(),
      ...stack.vars,
      // servers talk TCP to redis-server and Postgres (the REST stand-ins stay up for the tools)
      ...(cluster ? { REDIS_CLUSTER_NODES: cluster.urls.join(",") } : { REDIS_URL: stack.redis.url }),
      DATABASE_DRIVER: "tcp",
      CRON_SCHEDULE: wranglerCrons()[0] ?? "* * * * *",
    },
  });
  dev.server = server;
  void server.exited.then((code) => {
    if (!dev.stopping) {
      console.error(`[dev] the ${runtime} engine exited (${code}); stopping`);
      void stop(dev, 1);
    }
  });
  console.log(`[dev] engine on ${runtime} at ${workerUrl}`);
}

void main();
