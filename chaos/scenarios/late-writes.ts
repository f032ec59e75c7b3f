import type { Scenario } from "../scenario";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const QUIET_SECONDS = 3;

/**
 * Redis restarted empty while acknowledged orders' writes are held in QStash, and held on well past the
 * recovery quiet period: the sale is rebuilt from Postgres without them, resumes selling, and a new
 * crowd buys from it before the old writes land. Those late writes must be written and counted once in
 * the rebuilt Redis (debit-stock.lua), each on its own (none refused because of another in its batch),
 * and the sale must balance: the stock is large enough that the rebuilt Redis never resells their
 * units. (When it does, or when a user of a late order buys again after the quiet period, the late
 * write oversells or takes that user over the limit: the stats and the checker report it; see the
 * README's "what can still go wrong".) Idempotency answers die with Redis: `redisRebuilt`.
 */
export const lateWritesAfterQuiet: Scenario = {
  name: "late-writes-after-quiet",
  title: "Redis lost with order writes in flight that land only after the recovery quiet period",
  vars: { RECOVERY_QUIET_SECONDS: String(QUIET_SECONDS) },
  sale: (size) => ({ stock: size === "ci" ? 200 : 600 }),
  checkOptions: { redisRebuilt: true },
  async run(ctx) {
    const { app, sale, client } = ctx;
    await ctx.workload({ durationMs: ctx.ms(3_000, 8_000), userPrefix: "before-" });
    await app.drain();

    app.stack.qstash.pause();
    let held = 0;
    const inFlight = ctx.size === "ci" ? 12 : 40;
    await Promise.all(
      Array.from({ length: inFlight }, async (_, i) => {
        const op = await client.buy(sale.productToken, `inflight-${i}`, 1 + (i % 2), `inflight-${i}-k`);
        if (op.outcome === "ok") held++;
      }),
    );
    const lostAt = Date.now();
    await app.stack.redis.restart({ empty: true });
    await app.reconnect();
    ctx.fault(`Redis restarted empty with ${held} acknowledged order writes held in QStash`);
    await app.worker.scheduled();
    const deadline = Date.now() + 30_000;
    let status = "";
    while (Date.now() < deadline) {
      const res = await app.api.call("GET", `/api/sales/${sale.saleId}`);
      status = String(res.body.status);
      if (res.status === 200 && status === "live") break;
      await sleep(200);
    }
    if (status !== "live") ctx.violation(`the sale never resumed after the rebuild (status ${status})`);

    // a new crowd buys from the rebuilt sale while the old writes are still held
    await ctx.workload({ durationMs: ctx.ms(3_000, 8_000), userPrefix: "after-" });
    const heldMs = Date.now() - lostAt;
    app.stack.qstash.resume();
    ctx.fault(`writes held ${Math.round(heldMs / 1000)} s, ${QUIET_SECONDS} s quiet period; then delivered`);
    await app.drain();
    const stats = (await app.api.stats(sale.saleId)).body;
    if (stats.invariantHolds !== true)
      ctx.violation(`stats after the late writes: ${JSON.stringify(stats.invariantBreaks ?? stats)}`);
  },
};
