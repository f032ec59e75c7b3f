import { serveStatic } from "hono/bun";
import { streamDefaultSettings } from "../stream-defaults";
import { createServerEngine } from "./server";
import { startTracingSdk } from "./tracing-sdk";

/**
 * The Bun entry: settings from the environment, `Bun.serve`, the scheduled handler on a timer
 * (CRON_SCHEDULE, wrangler.toml's "* * * * *" by default), SIGUSR2 runs it at once, and SIGTERM/SIGINT
 * finish the background work before exit. Run: `bun .wrangler/servers/bun/server.js` (`npm run build:servers`).
 */
const engine = createServerEngine(Bun.env, {
  headersFile: await Bun.file(`${Bun.env.PUBLIC_DIR ?? "public"}/_headers`).text(),
  serveStatic,
  tracing: (settings) => startTracingSdk(settings),
  defaults: streamDefaultSettings("bun"),
});
const { settings } = engine;
const server = Bun.serve({
  port: settings.PORT,
  hostname: settings.HOSTNAME,
  idleTimeout: 0,
  // the socket's address only when asked for (no TRUST_PROXY_HEADER): requestIP costs on every request
  fetch: (request, bun) =>
    engine.fetch(request, {
      get remoteAddress() {
        return bun.requestIP(request)?.address;
      },
    }),
});
console.log(`listening on http://${server.hostname}:${server.port}`);
engine.startTimer();
process.on("SIGUSR2", () => void engine.runScheduled("signal"));
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    void engine.shutdown(() => server.stop()).finally(() => process.exit(0));
  });
}
