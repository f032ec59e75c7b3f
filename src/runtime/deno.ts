import { serveStatic } from "hono/deno";
import { streamDefaultSettings } from "../stream-defaults";
import { createServerEngine } from "./server";
import { useRuntimeTracing } from "./tracing-sdk";

/**
 * The Deno entry (Deno Deploy or `deno run`): settings from the environment, `Deno.serve`, the scheduled
 * handler on `Deno.cron` (CRON_SCHEDULE, wrangler.toml's "* * * * *" by default), SIGUSR2 runs it at
 * once, and SIGTERM/SIGINT finish the background work before exit.
 * Run: `deno run -A --unstable-cron .wrangler/servers/deno/server.js` (the bundle `npm run build:servers` makes).
 */
const engine = createServerEngine(Deno.env.toObject(), {
  headersFile: await Deno.readTextFile(`${Deno.env.get("PUBLIC_DIR") ?? "public"}/_headers`),
  serveStatic,
  tracing: (settings) => useRuntimeTracing(settings),
  defaults: streamDefaultSettings("deno"),
});
const { settings } = engine;
const server = Deno.serve(
  {
    port: settings.PORT,
    hostname: settings.HOSTNAME,
    onListen: ({ hostname, port }) => console.log(`listening on http://${hostname}:${port}`),
  },
  (request, info) => engine.fetch(request, { remoteAddress: info.remoteAddr.hostname }),
);
if (settings.CRON_SCHEDULE !== "off")
  Deno.cron("sweep", settings.CRON_SCHEDULE, () => engine.runScheduled("cron"));
Deno.addSignalListener("SIGUSR2", () => void engine.runScheduled("signal"));
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, () => {
    void engine.shutdown(() => server.shutdown()).finally(() => Deno.exit(0));
  });
}
