import { exampleSecrets, wranglerVars } from "../../local/worker-runtime";
import { CHAOS_VARS, type Scenario, type ScenarioContext } from "../scenario";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SHOPPERS = 50;
const REFRESH_MS = 500;
const vars = { CATALOG_REFRESH_MS: String(REFRESH_MS), STORE_CLOCK_REFRESH_MS: String(REFRESH_MS) };

/**
 * The sale's opening crowd: 50 shoppers whose buys reach one isolate in the same instant, alternately
 * into a fresh isolate (restarted, as after a deploy or on a new Cloudflare location: no catalog, no
 * clock offset, no open publish batch) and into a warm one that sat quiet until its catalog and clock
 * refreshes were due. No request may wait on another request's I/O, so no answer is a 5xx; the
 * workload runs between the bursts, and the checker finds every 202 in Postgres.
 */
export const coldBurst: Scenario = {
  name: "cold-burst",
  title: "50 buys in the same instant into a fresh isolate and one whose refreshes are due",
  vars,
  sale: (size) => ({ stock: size === "ci" ? 120 : 300 }),
  async run(ctx) {
    const rounds = ctx.size === "ci" ? 2 : 4;
    let fivexx = 0;
    for (let round = 0; round < rounds; round++) {
      const fresh = round % 2 === 0;
      if (fresh) await restartIsolate(ctx);
      else await sleep(REFRESH_MS * 3);
      const ops = await Promise.all(
        Array.from({ length: SHOPPERS }, (_, i) =>
          ctx.client.buy(ctx.sale.productToken, `burst-${round}-${i}`, 1 + (i % 2)),
        ),
      );
      const failed = ops.filter((op) => op.status === undefined || op.status >= 500);
      fivexx += failed.length;
      for (const op of failed)
        ctx.violation(`burst ${round}: ${op.userId} answered ${op.status ?? op.note} (${op.code ?? ""})`);
      ctx.log(`burst ${round} (${fresh ? "fresh isolate" : "refreshes due"}): ${summary(ops)}`);
      await ctx.workload({ durationMs: ctx.ms(1_500, 4_000) });
    }
    ctx.fault(`${rounds} bursts of ${SHOPPERS} simultaneous buys, ${fivexx} answered 5xx or no answer`);
  },
};

/** Restarts the worker's isolate with the same settings (its caches and open batch are gone). */
async function restartIsolate(ctx: ScenarioContext): Promise<void> {
  await ctx.app.worker.setVars({
    ...wranglerVars(),
    ...exampleSecrets(),
    ...ctx.app.stack.vars,
    ...CHAOS_VARS,
    ...vars,
  });
}

function summary(ops: { status?: number }[]): string {
  const counts = new Map<string, number>();
  for (const op of ops)
    counts.set(String(op.status ?? "none"), (counts.get(String(op.status ?? "none")) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${n}×${status}`).join(", ");
}
