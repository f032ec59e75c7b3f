/**
 * `npm run dev`: the whole product on this machine, no cloud account. Starts a fresh local stack
 * (redis-server, Postgres, the Upstash / Neon / QStash stand-ins), applies the migrations, runs the
 * worker with `wrangler dev`, fires its Cron Trigger on wrangler.toml's schedule as production does
 * (local/cron.ts: the sweeper, reconciliation and overdue expiry), creates a demo sale (1,000 units,
 * limit 2 per user, live now) and prints how to use it. Ctrl-C stops every process it started. Data under `.local/` is reset at each start.
 *
 * `npm run dev:deno` / `npm run dev:bun` (`--runtime deno|bun`): the same stack with the engine on Deno or
 * Bun instead (the bundle of src/runtime/<runtime>.ts, local/server-runtime.ts), its own cron
 * (`Deno.cron`, a timer on Bun) on wrangler.toml's schedule, settings from .dev.vars as environment variables.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type CronTrigger, startCron, wranglerCrons } from "./cron";
import { migrate } from "./migrate";
import { waitFor } from "./ports";
import { RedisNotInstalledError } from "./redis-process";
import { buildServer, type ServerRuntime, type ServerRuntimeName, startServer } from "./server-runtime";
import { type Stack, startStack } from "./stack";
import { ensureSystemPackages, MissingSystemPackagesError } from "./system-packages";

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

/** Every setting of .dev.vars (the server runtimes get them as environment variables). */
function devVars(): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const [, k, v] of readFileSync(join(root, ".dev.vars"), "utf8").matchAll(/^([A-Z0-9_]+)=(.*)$/gm))
    vars[k ?? ""] = (v ?? "").trim();
  return vars;
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

async function createDemoSale(adminToken: string): Promise<{ saleId: string; productToken: string }> {
  const now = Date.now();
  const res = await fetch(`${workerUrl}/api/admin/sales`, {
    method: "POST",
    headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
    body: JSON.stringify({
      productId: "demo-concert-tickets",
      name: "Concert tickets — flash sale",
      priceCents: 4900,
      stock: 1000,
      perUserLimit: 2,
      startsAt: new Date(now - 1000).toISOString(),
      endsAt: new Date(now + 24 * 3600_000).toISOString(),
      paymentWindowSeconds: 300,
    }),
  });
  if (res.status !== 201) throw new Error(`creating the demo sale failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as { saleId: string; productToken: string };
}

function printInstructions(sale: { saleId: string; productToken: string }, adminToken: string): void {
  const lines = [
    "",
    `  Flash sale running locally (engine on ${runtimeOption()})`,
    `  Shopper page     ${workerUrl}/`,
    `  Operator page    ${workerUrl}/admin.html   (operator token: ${adminToken})`,
    `  Demo sale        ${sale.saleId}: 1,000 units, limit 2 per user, live now`,
    "",
    "  Buy from a terminal:",
    `    TOKEN=$(curl -s -X POST ${workerUrl}/api/dev/login -H 'Content-Type: application/json' -d '{"userId":"alice"}' | sed 's/.*"token":"\\([^"]*\\)".*/\\1/')`,
    `    curl -s -X POST ${workerUrl}/api/buy/${sale.productToken} -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"quantity":2}'`,
    `    curl -s ${workerUrl}/api/orders/<orderId> -H "Authorization: Bearer $TOKEN"`,
    `    curl -s ${workerUrl}/api/admin/sales/${sale.saleId}/stats -H 'Authorization: Bearer ${adminToken}'`,
    "",
    "  Shopper tokens are HS256 JWTs signed with JWT_SECRET from .dev.vars (claim sub = user id);",
    "  POST /api/dev/login mints one for any user id on the local stack. Ctrl-C stops everything.",
    "",
  ];
  console.log(lines.join("\n"));
}

async function main(): Promise<void> {
  ensureDevVars();
  await rm(join(root, ".local"), { recursive: true, force: true });
  let stack: Stack | undefined;
  let wrangler: ChildProcess | undefined;
  let server: ServerRuntime | undefined;
  let cron: CronTrigger | undefined;
  const runtime = runtimeOption();
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    cron?.stop();
    await server?.stop().catch(() => {});
    if (wrangler?.pid) {
      try {
        process.kill(-wrangler.pid, "SIGTERM");
      } catch {}
    }
    await stack?.stop().catch(() => {});
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));
  process.on("exit", () => {
    if (wrangler?.pid) {
      try {
        process.kill(-wrangler.pid, "SIGKILL");
      } catch {}
    }
  });

  try {
    ensureSystemPackages(["redis-server"], { for: "dev" });
    stack = await startStack({ mode: "dev", handleSignals: false });
    await migrate(stack.vars.DATABASE_URL);
    console.log("[dev] migrations applied");
    if (runtime === "workers") {
      wrangler = startWrangler({ ...stack.vars, PUBLIC_URL: workerUrl });
      wrangler.once("exit", (code) => {
        if (!stopping) {
          console.error(`[dev] wrangler dev exited (${code}); stopping`);
          void stop(1);
        }
      });
      await waitFor(async () => (await fetch(`${workerUrl}/api/health`).catch(() => null))?.ok === true, {
        timeoutMs: 60_000,
        what: "wrangler dev",
      });
      cron = startCron({ fire: fireScheduled, log: (line) => console.error(`[dev] ${line}`) });
    } else {
      await buildServer(runtime);
      server = await startServer({
        runtime,
        port: WORKER_PORT,
        vars: {
          ...devVars(),
          ...stack.vars,
          // servers talk TCP to redis-server and Postgres (the REST stand-ins stay up for the tools)
          REDIS_URL: stack.redis.url,
          DATABASE_DRIVER: "tcp",
          CRON_SCHEDULE: wranglerCrons()[0] ?? "* * * * *",
        },
      });
      void server.exited.then((code) => {
        if (!stopping) {
          console.error(`[dev] the ${runtime} engine exited (${code}); stopping`);
          void stop(1);
        }
      });
      console.log(`[dev] engine on ${runtime} at ${workerUrl}`);
    }
    const adminToken = devVar("ADMIN_TOKEN");
    printInstructions(await createDemoSale(adminToken), adminToken);
  } catch (error) {
    if (error instanceof RedisNotInstalledError || error instanceof MissingSystemPackagesError) {
      console.error(`[dev] ${error.message}`);
    } else {
      console.error(`[dev] failed to start: ${error instanceof Error ? error.message : String(error)}`);
    }
    await stop(1);
  }
}

void main();
