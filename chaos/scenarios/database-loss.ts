import type { RedisProcess } from "../../local/redis-process";
import { saleKeys } from "../../src/stock/keys";
import { storeIndexOf } from "../../src/stores/sharded-store";
import { startApp } from "../../test/support/app";
import type { Sale, Scenario, ScenarioContext } from "../scenario";
import { throughALoss } from "./redis-loss";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const QUIET_SECONDS = 3;

/**
 * The engine over three Upstash databases (UPSTASH_REDIS_REST_URLS), the sale's own database killed and
 * restarted empty mid-sale under the workload, order writes in flight; the cron rebuilds the sale from
 * Postgres. As with the one store lost (redis-loss.ts): no 202 for that sale until it is rebuilt and its
 * quiet period is over, and the checker finds every acknowledged reservation with its order and no unit
 * sold twice. Besides: a second sale, whole in another database, sells throughout the outage (a buy a
 * shopper sends every 100 ms is answered 202 while the first sale is lost), and is sold exactly.
 */
export const databaseLoss: Scenario = {
  name: "database-loss",
  title: "One of three Upstash databases restarted empty mid-sale; a sale in another sells throughout",
  vars: { RECOVERY_QUIET_SECONDS: String(QUIET_SECONDS) },
  sale: (size) => ({ stock: size === "ci" ? 60 : 300 }),
  checkOptions: { redisRebuilt: true },
  start: async (vars) => ({ app: await startApp({ vars, layout: "databases" }) }),
  async run(ctx) {
    const home = homeOf(ctx, ctx.sale.saleId);
    const other = await saleElsewhere(ctx, home);
    const alongside = sellAlongside(ctx, other);
    let window = { killedAt: 0, quietEnds: 0 };
    await Promise.all([
      ctx.workload({ durationMs: ctx.ms(12_000, 28_000) }),
      (async () => {
        await sleep(ctx.ms(2_000, 4_000));
        window = await throughALoss(ctx, "cron", async () => {
          await home.restart({ empty: true });
          return `the sale's database (one of ${ctx.app.storeServers.length}) restarted empty`;
        });
      })(),
    ]);
    const sold = await alongside.stop();
    const during = sold.filter((at) => at >= window.killedAt && at <= window.quietEnds).length;
    ctx.fault(
      `the sale in another database: ${sold.length} bought, ${during} of them while the first was lost or quiet`,
    );
    if (during === 0) ctx.violation("the sale in another database sold nothing while the first was lost");
    const stats = await ctx.app.api.stats(other.saleId);
    const { remaining, invariantHolds } = stats.body as { remaining?: number; invariantHolds?: boolean };
    if (remaining !== OTHER_STOCK - sold.length || invariantHolds !== true)
      ctx.violation(
        `the sale in another database: ${sold.length} bought, stats ${JSON.stringify(stats.body).slice(0, 300)}`,
      );
  },
};

const OTHER_STOCK = 100_000;

/** The redis-server holding a sale (the engine's placement: its keys' hash slot). */
function homeOf(ctx: ScenarioContext, saleId: string): RedisProcess {
  const servers = ctx.app.storeServers;
  return servers[storeIndexOf(saleKeys(saleId).meta, servers.length)] as RedisProcess;
}

/** A sale whose keys live in another database than `home` (sales are made until one lands there). */
async function saleElsewhere(ctx: ScenarioContext, home: RedisProcess): Promise<Sale> {
  for (let i = 0; i < 40; i++) {
    const sale = (await ctx.app.api.createSale({ stock: OTHER_STOCK, perUserLimit: 1 })) as Sale;
    if (homeOf(ctx, sale.saleId) !== home) return sale;
  }
  throw new Error("no sale landed in another database in 40 tries");
}

/** A shopper a new one every 100 ms buys one unit of `sale`; `stop` gives when each 202 came. */
function sellAlongside(ctx: ScenarioContext, sale: Sale): { stop(): Promise<number[]> } {
  const sold: number[] = [];
  let running = true;
  const loop = (async () => {
    for (let n = 0; running; n++) {
      const res = await ctx.app.api.buy(sale.productToken, `alongside-${n}`, 1, {
        "Idempotency-Key": `alongside-${n}`,
      });
      if (res.status === 202) sold.push(Date.now());
      else if (res.status !== 503)
        ctx.violation(`the sale in another database answered ${res.status} ${res.text.slice(0, 200)}`);
      await sleep(100);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return sold;
    },
  };
}
