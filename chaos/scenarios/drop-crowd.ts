import { DROP_CROWD_SIZES, runDropCrowd } from "../drop-crowd";
import type { Scenario } from "../scenario";

/**
 * A drop of 12 sizes under a crowd of carts (chaos/drop-crowd.ts), with every QStash delivery possibly
 * duplicated and delayed (reordered) while the crowd buys, pays, cancels and lets orders expire. The drop
 * is judged by its own rules, per variant; the checker's per-sale rules hold for the scenario's sale of
 * one product, which the drop leaves alone.
 */
export const dropCrowd: Scenario = {
  name: "drop-crowd",
  title: "A drop of 12 sizes under a crowd of carts, deliveries duplicated and reordered",
  async run(ctx) {
    const faults = { duplicateRate: 0.3, delayJitterMs: ctx.ms(1_000, 2_000) };
    ctx.app.stack.qstash.setFaults(faults);
    ctx.fault(`duplicateRate ${faults.duplicateRate}, delay jitter 0–${faults.delayJitterMs} ms (reorders)`);
    const size = DROP_CROWD_SIZES[ctx.size];
    try {
      const result = await runDropCrowd(ctx.app, size, { log: ctx.log });
      ctx.log(`figures ${JSON.stringify(result.figures)}`);
      for (const v of result.violations) ctx.violation(v);
    } finally {
      ctx.app.stack.qstash.setFaults({ duplicateRate: 0, delayJitterMs: 0 });
    }
  },
};
