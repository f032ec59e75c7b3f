import { exampleSecrets, wranglerVars } from "../../local/worker-runtime";
import { CHAOS_VARS, type Scenario } from "../scenario";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The job endpoint refuses every delivery for a while: the worker is redeployed with signing keys that
 * do not match QStash's (every delivery is 401, retried, then dead-lettered; the failure callback is
 * refused too), and redeployed again with the right ones. Each redeploy restarts the isolate, dropping
 * whatever it still had in `waitUntil` (publishes included).
 */
export const jobEndpointDown: Scenario = {
  name: "job-endpoint-down",
  title: "Job endpoint refusing deliveries (wrong signing keys), redeploys mid-sale",
  async run(ctx) {
    const good = { ...wranglerVars(), ...exampleSecrets(), ...ctx.app.stack.vars, ...CHAOS_VARS };
    const bad = {
      ...good,
      QSTASH_CURRENT_SIGNING_KEY: "sig_wrong_current_key_0000",
      QSTASH_NEXT_SIGNING_KEY: "sig_wrong_next_key_0000",
    };
    const downMs = ctx.ms(3_000, 15_000);
    await Promise.all([
      ctx.workload({ durationMs: ctx.ms(8_000, 24_000) }),
      (async () => {
        await sleep(ctx.ms(1_500, 3_000));
        await ctx.app.worker.setVars(bad);
        ctx.fault(
          `job endpoint refusing deliveries for ${downMs / 1000} s (redeploy with wrong signing keys)`,
        );
        try {
          await sleep(downMs);
        } finally {
          await ctx.app.worker.setVars(good);
          ctx.fault("redeployed with the right keys");
        }
      })(),
    ]);
    ctx.fault(`${ctx.app.stack.qstash.dlq().length} deliveries dead-lettered`);
  },
};
