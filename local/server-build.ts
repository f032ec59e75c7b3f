/** `npm run build:servers`: the Deno and Bun bundles (.wrangler/servers/<runtime>/server.js). */
import { buildServer } from "./server-runtime";

for (const runtime of ["deno", "bun"] as const) console.log(`[build] ${await buildServer(runtime)}`);
