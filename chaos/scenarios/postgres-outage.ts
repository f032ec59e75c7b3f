import type { Scenario, ScenarioContext } from "../scenario";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Stops Postgres `downMs` after `afterMs`, starts it again, all while the workload runs. */
async function outage(ctx: ScenarioContext, afterMs: number, downMs: number): Promise<void> {
  await sleep(afterMs);
  await ctx.app.stack.postgres.stop();
  ctx.fault(`Postgres stopped ${Math.round(downMs / 100) / 10} s`);
  try {
    await sleep(downMs);
  } finally {
    await ctx.app.stack.postgres.start();
  }
}

/**
 * Deliveries failing for a while: Postgres is down long enough that order writes and payment timeouts
 * exhaust their QStash retries and are dead-lettered (and pays and cancels answer 503); the sweeper and
 * the outbox must bring every order in once it is back.
 */
export const deliveriesFailing: Scenario = {
  name: "deliveries-failing",
  title: "Order writes and timeouts failing while Postgres is down, then recovering",
  async run(ctx) {
    const downMs = ctx.ms(3_000, 20_000);
    await Promise.all([
      ctx.workload({ durationMs: ctx.ms(8_000, 28_000) }),
      outage(ctx, ctx.ms(1_500, 5_000), downMs),
    ]);
    ctx.fault(`${ctx.app.stack.qstash.dlq().length} deliveries dead-lettered`);
  },
};

/** Postgres stopped and started twice mid-sale, briefly, while shoppers pay and cancel. */
export const postgresRestart: Scenario = {
  name: "postgres-restart",
  title: "Postgres stopped and restarted mid-sale, twice",
  async run(ctx) {
    await Promise.all([
      ctx.workload({ durationMs: ctx.ms(9_000, 22_000), payRate: 0.55, cancelRate: 0.25 }),
      (async () => {
        await outage(ctx, ctx.ms(1_500, 3_000), ctx.ms(1_000, 4_000));
        await outage(ctx, ctx.ms(2_000, 5_000), ctx.ms(1_500, 6_000));
      })(),
    ]);
  },
};
