import { ADMIN_TOKEN } from "../../test/support/shopper";
import type { Scenario, ScenarioContext } from "../scenario";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Adjustment = { key: string; delta: number; answer?: number };

/** Makes Postgres refuse adjustment writes as an unreachable database would, after Redis applied them. */
async function refuseAdjustmentWrites(ctx: ScenarioContext, on: boolean): Promise<void> {
  await ctx.app.db.query(
    on
      ? `create or replace function chaos_refuse_adjustment() returns trigger language plpgsql as $$
         begin raise exception 'chaos: adjustment write refused' using errcode = '57P03'; end $$;
         create trigger chaos_refuse_adjustment before insert on stock_adjustments
         for each row execute function chaos_refuse_adjustment();`
      : "drop trigger if exists chaos_refuse_adjustment on stock_adjustments",
  );
}

/** An operator who retries each adjustment with its Idempotency-Key until it is answered (and once more). */
async function operator(ctx: ScenarioContext, count: number, done: Adjustment[]): Promise<void> {
  for (let i = 0; i < count; i++) {
    const adjustment: Adjustment = { key: `restock-${i}`, delta: i % 4 === 3 ? -1 : 1 + (i % 3) };
    done.push(adjustment);
    const deadline = Date.now() + 60_000;
    for (let sends = 0; Date.now() < deadline; sends++) {
      const res = await ctx.app.api
        .call("POST", `/api/admin/sales/${ctx.sale.saleId}/stock`, {
          token: ADMIN_TOKEN,
          body: { delta: adjustment.delta },
          headers: { "Idempotency-Key": adjustment.key },
        })
        .catch(() => ({ status: 0 }));
      if (res.status === 200 || res.status === 409) {
        if (adjustment.answer === undefined && sends === 0 && res.status === 200) {
          adjustment.answer = 200;
          continue; // a duplicate delivery of a request that succeeded: must change nothing
        }
        adjustment.answer = res.status;
        break;
      }
      await sleep(250);
    }
    await sleep(ctx.ms(300, 700));
  }
}

/**
 * Operator stock adjustments retried across a Postgres outage and across failures between Redis and
 * Postgres (adjustment writes refused after Redis applied them), while shoppers buy, pay and cancel.
 * Every adjustment answered 200 must be applied exactly once in both stores, whatever failed between
 * its attempts; the checker then finds Redis and Postgres stock equal and the balance intact.
 */
export const adminAdjustRetries: Scenario = {
  name: "admin-adjust-retries",
  title: "Admin stock adjustments retried across a Postgres outage",
  async run(ctx) {
    const adjustments: Adjustment[] = [];
    const faults = async () => {
      await sleep(ctx.ms(1_000, 3_000));
      await ctx.app.stack.postgres.stop();
      ctx.fault("Postgres stopped");
      try {
        await sleep(ctx.ms(2_000, 6_000));
      } finally {
        await ctx.app.stack.postgres.start();
      }
      await sleep(ctx.ms(1_000, 3_000));
      await refuseAdjustmentWrites(ctx, true);
      ctx.fault("adjustment writes refused after Redis applied them");
      try {
        await sleep(ctx.ms(2_000, 6_000));
      } finally {
        await refuseAdjustmentWrites(ctx, false);
      }
    };
    await Promise.all([
      ctx.workload({ durationMs: ctx.ms(8_000, 22_000), payRate: 0.5, cancelRate: 0.2 }),
      operator(ctx, ctx.size === "ci" ? 12 : 30, adjustments),
      faults(),
    ]);
    const applied = adjustments.filter((a) => a.answer === 200);
    const unanswered = adjustments.filter((a) => a.answer === undefined);
    if (unanswered.length > 0) ctx.violation(`${unanswered.length} adjustments never answered 200 or 409`);
    const { rows } = await ctx.app.db.query<{ n: number; total: number }>(
      "select count(*)::int as n, coalesce(sum(delta), 0)::int as total from stock_adjustments where sale_id = $1",
      [ctx.sale.saleId],
    );
    const want = applied.reduce((sum, a) => sum + a.delta, 0);
    const got = rows[0] ?? { n: 0, total: 0 };
    ctx.log(
      `${applied.length} adjustments applied (${want} units), Postgres holds ${got.n} (${got.total} units)`,
    );
    if (got.n !== applied.length || got.total !== want)
      ctx.violation(
        `adjustments answered 200: ${applied.length} (${want} units); recorded ${got.n} (${got.total})`,
      );
  },
};
