import { readFileSync } from "node:fs";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * The contract suite that also runs with the engine on Deno and Bun (FLASH_RUNTIME): every route and its
 * error codes, the order pipeline, security, fuzz, realtime streams, stock adjustments, a Redis loss and
 * the OpenAPI document as served.
 * Everything else (Lua scripts, stand-ins, the checker, browser tests) does not depend on the runtime
 * and runs once, with the engine in workerd.
 */
const CONTRACT_ON_SERVERS = [
  "test/integration/buy.test.ts",
  "test/integration/buy-replays.test.ts",
  "test/integration/buy-void.test.ts",
  "test/integration/sales-admin.test.ts",
  "test/integration/order-pipeline.test.ts",
  "test/integration/order-batches.test.ts",
  "test/integration/security.test.ts",
  "test/integration/fuzz.test.ts",
  "test/integration/realtime.test.ts",
  "test/integration/stream-budgets.test.ts",
  "test/integration/stock-adjustment.test.ts",
  "test/integration/redis-loss.test.ts",
  "test/integration/openapi.test.ts",
  "test/integration/header-limits.test.ts",
  "test/integration/shopper-limits.test.ts",
  "test/integration/payments.test.ts",
  "test/integration/admission.test.ts",
  "test/integration/shop-identity.test.ts",
  "test/integration/webhooks.test.ts",
  "test/integration/sale-counters.test.ts",
];

/**
 * What only a server runtime has (TCP stores, a process behind a proxy, signals): run with the engine on
 * Deno and on Bun only (FLASH_RUNTIME), never in workerd.
 */
const SERVERS_ONLY = [
  "test/integration/behind-tls-proxy.test.ts",
  "test/integration/half-open-stores.test.ts",
  "test/integration/shutdown-deadline.test.ts",
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
    // Integration files each start their own real servers; on a 2-core machine they run one at a time.
    fileParallelism: false,
    reporters: ["default"],
    projects: [
      {
        extends: true,
        test: {
          name: "workers",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...SERVERS_ONLY],
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
