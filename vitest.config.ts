import { readFileSync } from "node:fs";
import { defineConfig } from "vitest/config";

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
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration files each start their own real servers; on a 2-core machine they run one at a time.
    fileParallelism: false,
    reporters: ["default"],
  },
});
