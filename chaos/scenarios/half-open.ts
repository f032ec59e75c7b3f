import { type StallMode, type StallProxy, startStallProxy } from "../../local/stall-proxy";
import { startApp } from "../../test/support/app";
import { type Scenario, type ScenarioContext, serverRuntime } from "../scenario";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let proxies: { redis: StallProxy; postgres: StallProxy } | null = null;

/**
 * The server's TCP connections to Redis and Postgres go silent mid-burst: "drop" is a peer gone behind
 * something that keeps the sockets open (bytes vanish, nothing is ever closed; only new connections work
 * once it ends), "hold" a partition that heals (everything held arrives late, commands the engine gave
 * up on included). Buys answer 503 meanwhile (nothing reserved); the engine must find the dead
 * connections and replace them within seconds. Bun, or FLASH_RUNTIME=deno.
 */
export const halfOpen: Scenario = {
  name: "half-open",
  title: "Redis and Postgres connections go silent mid-burst (TCP stores on a server), then recover",
  sale: (size) => ({ stock: size === "ci" ? 80 : 250 }),
  clientTimeoutMs: 15_000,
  async start(vars) {
    const app = await startApp({
      runtime: serverRuntime(),
      vars,
      async beforeEngine(stack) {
        const redis = await startStallProxy({ target: stack.redis.url });
        const postgres = await startStallProxy({ target: stack.vars.DATABASE_URL });
        proxies = { redis, postgres };
        return { REDIS_URL: redis.via(stack.redis.url), DATABASE_URL: postgres.via(stack.vars.DATABASE_URL) };
      },
    });
    const stopApp = app.stop;
    app.stop = async () => {
      await stopApp();
      await proxies?.redis.close();
      await proxies?.postgres.close();
    };
    return { app };
  },
  async run(ctx) {
    const p = proxies as NonNullable<typeof proxies>;
    const silentMs = ctx.ms(3_000, 10_000);
    const rounds: [keyof typeof p, StallMode][] =
      ctx.size === "ci"
        ? [
            ["redis", "drop"],
            ["postgres", "drop"],
          ]
        : [
            ["redis", "drop"],
            ["postgres", "drop"],
            ["redis", "hold"],
            ["postgres", "hold"],
          ];
    const controller = new AbortController();
    const workload = ctx.workload({ durationMs: 600_000, signal: controller.signal });
    try {
      for (const [store, mode] of rounds) {
        await sleep(ctx.ms(1_500, 4_000));
        await silence(ctx, p[store], store, mode, silentMs);
      }
      await sleep(ctx.ms(2_000, 5_000));
    } finally {
      controller.abort();
      await workload;
    }
  },
};

/** One silence: a burst of buys as it starts, `ms` of it, then how long until the store answers again. */
async function silence(
  ctx: ScenarioContext,
  proxy: StallProxy,
  store: "redis" | "postgres",
  mode: StallMode,
  ms: number,
): Promise<void> {
  proxy.stall(mode);
  const burst = Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      ctx.client.buy(
        ctx.sale.productToken,
        `silent-${store}-${mode}-${i}`,
        1,
        `silent-${store}-${mode}-${i}`,
      ),
    ),
  );
  await sleep(ms);
  proxy.resume();
  const resumed = Date.now();
  let recovered = Number.NaN;
  while (Date.now() - resumed < 30_000) {
    const res = await ctx.app.api.stats(ctx.sale.saleId).catch(() => null);
    if (res?.status === 200) {
      recovered = Date.now() - resumed;
      break;
    }
    await sleep(100);
  }
  const answers = await burst;
  const statuses = answers.map((op) => op.status ?? op.note).join(",");
  if (Number.isNaN(recovered)) ctx.violation(`${store} not answering 30 s after the ${mode} silence ended`);
  ctx.fault(
    `${store} connections silent (${mode}) ${ms / 1000} s; stats answered again ${recovered} ms after; ` +
      `burst during it: ${summary(statuses)}; ${proxy.connections().silent} black-holed sockets left open`,
  );
}

function summary(list: string): string {
  const counts = new Map<string, number>();
  for (const s of list.split(",")) counts.set(s, (counts.get(s) ?? 0) + 1);
  return [...counts].map(([s, n]) => `${n}×${s}`).join(" ");
}
