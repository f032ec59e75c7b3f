import { recordingClient } from "../client";
import { History } from "../history";
import type { Scenario } from "../scenario";
import { runWorkload } from "../workload";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LONG_WINDOW_SECONDS = 86_400;
/** the contract's bound on the local stack: an unpaid order expires within 30 s after its window */
const GRACE_SECONDS = 30;

/**
 * Two sales live at once, one with a 3 s payment window (the judged sale) and one with a 1-day window,
 * bought in the same instants by two concurrent workloads, so the isolate's publish batches mix them.
 * Every unpaid order of the short sale must expire by its own payment-timeout job within its window
 * plus 30 s, whatever shared its batch; the Cron sweeper (which expires overdue orders as a fallback)
 * is not run until that has been checked.
 */
export const mixedWindows: Scenario = {
  name: "mixed-windows",
  title: "Two sales with 3 s and 1-day payment windows bought in the same instants",
  async run(ctx) {
    const { app } = ctx;
    const long = await app.api.createSale({
      stock: ctx.size === "ci" ? 60 : 240,
      perUserLimit: 2,
      paymentWindowSeconds: LONG_WINDOW_SECONDS,
    });
    ctx.fault(`a second sale with a ${LONG_WINDOW_SECONDS} s window bought alongside, same isolate batches`);
    const longClient = recordingClient(app.worker.url, new History(), { timeoutMs: 4_000 });
    await Promise.all([
      ctx.workload({ payRate: 0.2, cancelRate: 0.1, raceRate: 0.05 }),
      runWorkload(longClient, {
        productToken: long.productToken,
        users: ctx.size === "ci" ? 40 : 150,
        durationMs: ctx.ms(6_000, 20_000),
        concurrency: ctx.size === "ci" ? 6 : 12,
        seed: 2,
        payRate: 0,
        cancelRate: 0,
        raceRate: 0,
      }),
    ]);
    // the short sale's unpaid orders, by their payment-timeout jobs alone (no sweeper run yet)
    const overdue = async () => {
      const { rows } = await app.db.query<{ n: number; latest: Date | null }>(
        `select count(*)::int as n, max(expires_at) as latest from orders
         where sale_id = $1 and status = 'awaiting_payment'`,
        [ctx.sale.saleId],
      );
      return rows[0] ?? { n: 0, latest: null };
    };
    let left = await overdue();
    const deadline = (left.latest?.getTime() ?? Date.now()) + GRACE_SECONDS * 1000;
    while (left.n > 0 && Date.now() < deadline) {
      await sleep(250);
      left = await overdue();
    }
    const { rows } = await app.db.query<{ n: number }>(
      "select count(*)::int as n from orders where sale_id = $1 and status = 'expired'",
      [ctx.sale.saleId],
    );
    ctx.fault(`${rows[0]?.n ?? 0} short-window orders expired by their own timeout jobs`);
    if (left.n > 0)
      ctx.violation(`${left.n} orders of the 3 s sale still unpaid ${GRACE_SECONDS} s after their window`);
  },
};
