import type { Scenario } from "../scenario";

/**
 * Every QStash delivery may arrive twice and late, so order writes, payment timeouts and their
 * duplicates land in any order beside the shoppers' own pays and cancels.
 */
export const qstashChaos: Scenario = {
  name: "qstash-chaos",
  title: "QStash deliveries duplicated, delayed and reordered",
  async run(ctx) {
    const faults = { duplicateRate: 0.5, delayJitterMs: ctx.ms(1_500, 3_000) };
    ctx.app.stack.qstash.setFaults(faults);
    ctx.fault(`duplicateRate ${faults.duplicateRate}, delay jitter 0–${faults.delayJitterMs} ms (reorders)`);
    try {
      await ctx.workload();
    } finally {
      ctx.app.stack.qstash.setFaults({ duplicateRate: 0, delayJitterMs: 0 });
    }
    ctx.fault(`${ctx.app.stack.qstash.delivered.duplicates} duplicate deliveries made`);
  },
};
