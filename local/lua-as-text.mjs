/**
 * Lets scripts run with tsx import `lua/*.lua` as text, as wrangler, the server bundles (esbuild) and
 * vitest do: `tsx --import ./local/lua-as-text.mjs chaos/run.ts` (the `chaos` and `bench` scripts).
 */
import { register } from "node:module";

register("./lua-as-text-hooks.mjs", import.meta.url);
