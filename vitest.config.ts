import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration files each start their own real servers; on a 2-core machine they run one at a time.
    fileParallelism: false,
    reporters: ["default"],
  },
});
