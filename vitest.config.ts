import { readFileSync } from "node:fs";
import { configDefaults, defineConfig } from "vitest/config";
// with an extension, as Vite asks of a config's imports (.js: TypeScript maps it to the .ts file)
import { slowestFirst } from "./test/support/slowest-first-sequencer.js";

/**
 * The contract suite: the files that also run with the engine on Deno and on Bun (FLASH_RUNTIME), so
 * every route and its error codes, the streams, the pipeline, payments, webhooks, the waiting room, the
 * limits, the recoveries after a loss and the TCP stores under faults are checked on all three runtimes.
 * Everything else (Lua scripts, stand-ins, the checker, browser tests) does not depend on the runtime
 * and runs once, with the engine in workerd.
 */
const CONTRACT_ON_SERVERS = [
  "test/integration/{identity,payments,realtime}/*.test.ts",
  "test/integration/*/*.security.test.ts",
  "test/integration/api/{fuzz,guessed-product-tokens,openapi-document,shopper-limits,request-id,ipv6-clients}.test.ts",
  "test/integration/buy/{buy.happy,buy.error,idempotency-replays,void-reservation,silent-redis,variants,drop-limit-across-processes}.test.ts",
  "test/integration/orders/{pipeline,batch-writes}.test.ts",
  "test/integration/recovery/{redis-loss,sale-counters,catalog-after-loss,variant-stats}.test.ts",
  "test/integration/room/{room,admission-pause,room-after-loss}.test.ts",
  "test/integration/review/room-record.test.ts",
  "test/integration/runtimes/header-limits.test.ts",
  "test/integration/sales/{sales,stock-adjustment,variant-stock,pause-races,audit}.test.ts",
  "test/integration/webhooks/webhooks.test.ts",
  "test/integration/observability/metrics.test.ts",
  "test/integration/stores/upstash-databases.test.ts",
];

/**
 * What only a server runtime has (TCP stores, a process behind a proxy, signals, public/ served by the
 * process): run with the engine on Deno and on Bun only (FLASH_RUNTIME), never in workerd.
 */
const SERVERS_ONLY = [
  "test/integration/runtimes/{behind-tls-proxy,half-open-stores,server-runtimes,shutdown-deadline}.test.ts",
  // Workers' traces are the platform's (wrangler.toml [observability.traces]): a local workerd exports none
  "test/integration/observability/traces.test.ts",
  // the counts of /metrics after a chaos run (Workers serve no /metrics)
  "test/integration/chaos/metrics-agree.test.ts",
  // REDIS_CLUSTER_NODES: ioredis's Cluster is a TCP client (Workers take Upstash databases)
  "test/integration/stores/{redis-cluster,replica-acks,cluster-master-lost}.test.ts",
];

/**
 * Integration files that set process-wide state (OpenTelemetry's global tracer provider, the engine's
 * tracing switch): they run with the unit tests, each in a fresh module graph.
 */
const OWN_PROCESS_STATE = [
  "test/integration/observability/spans.test.ts",
  "test/integration/observability/sampling.test.ts",
];

/**
 * Seconds the longest files took in a full run on this 2-core machine (the report at the end of
 * `npm test` prints the slowest; a server runtime's figure stands for the other's): they start first.
 * Others are guessed by kind.
 */
const SLOWEST = {
  "workers:test/e2e/shopper-page.test.ts": 55,
  "workers:test/integration/orders/races.test.ts": 53,
  "workers:test/integration/recovery/redis-loss.test.ts": 37,
  "workers:test/integration/chaos/fault-scenarios.test.ts": 35,
  "workers:test/integration/chaos/room-loss.test.ts": 32,
  "workers:test/integration/chaos/room-crowd.test.ts": 30,
  "workers:test/integration/chaos/database-loss.test.ts": 24,
  "workers:test/integration/webhooks/webhooks.test.ts": 29,
  "deno:test/integration/recovery/redis-loss.test.ts": 27,
  "deno:test/integration/webhooks/webhooks.test.ts": 26,
  "bun:test/integration/webhooks/webhooks.test.ts": 26,
  "workers:test/integration/room/room.test.ts": 25,
  "bun:test/integration/payments/stripe.test.ts": 25,
  "deno:test/integration/payments/stripe.test.ts": 25,
  "workers:test/e2e/operator-page.test.ts": 24,
  "bun:test/integration/recovery/redis-loss.test.ts": 24,
  "bun:test/integration/room/room.test.ts": 23,
  "deno:test/integration/room/room.test.ts": 23,
  "deno:test/integration/payments/expired-checkouts.test.ts": 23,
  "bun:test/integration/payments/expired-checkouts.test.ts": 23,
  "workers:test/integration/orders/state-machine-model.test.ts": 23,
  "workers:test/integration/payments/stripe.test.ts": 22,
  "workers:test/integration/payments/expired-checkouts.test.ts": 22,
  "workers:test/integration/api/fuzz.test.ts": 21,
  "workers:test/integration/identity/shop-key-set.test.ts": 21,
  "workers:test/integration/api/shopper-limits.test.ts": 21,
  "deno:test/integration/realtime/sale-stream.test.ts": 21,
  "workers:test/integration/realtime/sale-stream.test.ts": 20,
  "bun:test/integration/identity/shop-key-set.test.ts": 20,
  "deno:test/integration/identity/shop-key-set.test.ts": 20,
  "bun:test/integration/realtime/sale-stream.test.ts": 20,
  "workers:test/e2e/realtime-page.test.ts": 20,
  "bun:test/integration/runtimes/half-open-stores.test.ts": 18,
  "deno:test/integration/runtimes/half-open-stores.test.ts": 18,
  "bun:test/integration/api/shopper-limits.test.ts": 18,
  "deno:test/integration/api/shopper-limits.test.ts": 18,
  "deno:test/integration/recovery/sale-counters.test.ts": 17,
  "bun:test/integration/recovery/sale-counters.test.ts": 17,
  "workers:test/integration/recovery/sale-counters.test.ts": 16,
  "workers:test/integration/room/admission-pause.test.ts": 16,
  "deno:test/integration/room/admission-pause.test.ts": 16,
  "bun:test/integration/room/admission-pause.test.ts": 16,
};

/**
 * Files that keep the CPU busy (a Chromium, thousands of requests, a crowd, a model run): spread over the
 * run rather than started together, so that the others' windows and timeouts do not run out meanwhile.
 */
const BUSY = [
  "test/e2e/",
  "test/integration/api/fuzz.test.ts",
  "test/integration/api/guessed-product-tokens.test.ts",
  "test/integration/buy/first-burst.test.ts",
  "test/integration/chaos/",
  "test/integration/orders/races.test.ts",
  "test/integration/orders/state-machine-model.test.ts",
  "test/integration/realtime/sale-stream-crowd.test.ts",
  "test/integration/recovery/sale-counters.test.ts",
  "test/integration/room/room.test.ts",
  "test/integration/room/room-model.test.ts",
  "test/integration/sales/invariant-flag.test.ts",
];

export default defineConfig({
  // The worker imports lua/*.lua as text (wrangler's Text rule); tests that import it need the same.
  plugins: [
    {
      name: "lua-as-text",
      load(id) {
        return id.endsWith(".lua") ? `export default ${JSON.stringify(readFileSync(id, "utf8"))};` : null;
      },
    },
  ],
  test: {
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each integration file starts its own servers on free ports, so files run side by side; most of
    // their time is spent waiting (windows, retries, sweeps), which leaves room for more files than cores.
    maxWorkers: 4,
    // An integration file starts its own servers and leaves nothing behind, so a worker process runs file
    // after file without reloading the modules they share (Miniflare, drizzle, the stand-ins): a third
    // less CPU per file. The unit project keeps isolation (it mocks modules).
    isolate: false,
    sequence: { sequencer: slowestFirst({ seconds: SLOWEST, busy: BUSY }) },
    reporters: ["default", "./test/support/slowest-files-reporter.ts"],
    projects: [
      {
        extends: true,
        // each file in a fresh module graph: the unit tests mock modules and timers
        test: { name: "unit", include: ["test/unit/**/*.test.ts", ...OWN_PROCESS_STATE], isolate: true },
      },
      {
        extends: true,
        test: {
          name: "workers",
          // over several stores (FLASH_STORES_LAYOUT, test/support/store-layouts.ts): the contract suite
          include: process.env.FLASH_STORES_LAYOUT
            ? CONTRACT_ON_SERVERS
            : ["test/integration/**/*.test.ts", "test/e2e/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...SERVERS_ONLY, ...OWN_PROCESS_STATE],
        },
      },
      {
        extends: true,
        test: {
          name: "deno",
          include: [...CONTRACT_ON_SERVERS, ...SERVERS_ONLY],
          env: { FLASH_RUNTIME: "deno" },
        },
      },
      {
        extends: true,
        test: {
          name: "bun",
          include: [...CONTRACT_ON_SERVERS, ...SERVERS_ONLY],
          env: { FLASH_RUNTIME: "bun" },
        },
      },
    ],
  },
});
