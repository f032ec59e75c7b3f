import { saleKeys } from "../../src/stock/keys";
import { ADMIN_TOKEN } from "../../test/support/shopper";
import type { Scenario, ScenarioContext } from "../scenario";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const QUIET_SECONDS = 3;

/**
 * Redis killed and restarted empty mid-sale (the failover that loses acknowledged writes), under the
 * workload, with order writes in flight (QStash held for a moment around the loss). The worker must
 * answer 503 UNAVAILABLE or 409 SALE_PAUSED until the sale is rebuilt from Postgres and its quiet
 * period is over (no 202 in that span; a 410 from an isolate that remembers the sale sold out is allowed), the writes in flight must land and be counted once, and the
 * checker must find every acknowledged reservation with its order and no unit sold twice.
 *
 * The first loss is recovered by the Cron sweeper (`scheduled()`); in the full run a second loss is
 * recovered by the operator route `POST /api/admin/sales/:saleId/rebuild`. Idempotency answers live in
 * Redis only and are lost with it: the checker runs with `redisRebuilt` (a key retried after the loss
 * may be answered afresh; unknown buys are then resolved by counting, not by their key).
 */
export const redisLoss: Scenario = {
  name: "redis-loss",
  title: "Redis killed and restarted empty mid-sale, then rebuilt from Postgres",
  vars: { RECOVERY_QUIET_SECONDS: String(QUIET_SECONDS) },
  sale: (size) => ({ stock: size === "ci" ? 60 : 300 }),
  checkOptions: { redisRebuilt: true },
  async run(ctx) {
    const losses = ctx.size === "ci" ? ["cron"] : ["cron", "operator"];
    await Promise.all([
      ctx.workload({ durationMs: ctx.ms(12_000, 28_000) }),
      (async () => {
        for (const how of losses) {
          await sleep(ctx.ms(2_000, 4_000));
          await loseRedis(ctx, how as "cron" | "operator");
        }
      })(),
    ]);
  },
};

async function loseRedis(ctx: ScenarioContext, how: "cron" | "operator"): Promise<void> {
  await throughALoss(ctx, how, async () => {
    await ctx.app.stack.redis.restart({ empty: true });
    return "Redis restarted empty";
  });
}

/**
 * A store lost under the workload, recovered by the cron or the operator's rebuild, with order writes in
 * flight (QStash held around it): `lose` restarts what it loses and says what. Then no buy of the sale
 * may be answered 202 until it is rebuilt and its quiet period is over (503, 409 SALE_PAUSED, or an
 * isolate's memory of a sold-out sale, 410). Returns when the loss began and the quiet period ended.
 */
export async function throughALoss(
  ctx: ScenarioContext,
  how: "cron" | "operator",
  lose: () => Promise<string>,
): Promise<{ killedAt: number; quietEnds: number }> {
  const { app, sale } = ctx;
  app.stack.qstash.pause();
  await sleep(800);
  const inFlight = await app.redis.hlen(saleKeys(sale.saleId).orders);
  const killedAt = Date.now();
  const what = await lose();
  await app.reconnect();
  ctx.fault(`${what} with ${inFlight} order writes in flight, recovered by the ${how}`);
  await sleep(800);
  if (how === "cron") await app.worker.scheduled();
  else {
    const res = await fetch(`${app.worker.url}/api/admin/sales/${sale.saleId}/rebuild`, {
      method: "POST",
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const body = await res.text();
    if (res.status !== 200) ctx.violation(`rebuild route answered ${res.status} ${body.slice(0, 200)}`);
  }
  app.stack.qstash.resume();
  const quietEnds = killedAt + QUIET_SECONDS * 1000;
  await sleep(Math.max(0, quietEnds - Date.now()) + 200);
  const gap: Record<string, number> = {};
  for (const op of ctx.history.ops) {
    if (op.kind !== "buy" || op.via !== "api" || op.completedAt === undefined) continue;
    if (op.invokedAt < killedAt || op.completedAt > quietEnds) continue;
    const answer = op.outcome === "unknown" ? "unknown" : `${op.status}${op.code ? ` ${op.code}` : ""}`;
    gap[answer] = (gap[answer] ?? 0) + 1;
    if (op.status === 202)
      ctx.violation(
        `a 202 ${op.invokedAt - killedAt} ms after Redis was lost, before the sale was rebuilt and settled`,
      );
    // 410 is the isolate's memory of a sold-out sale, answered without Redis (the contract allows it)
    else if (
      op.status !== 503 &&
      op.code !== "SALE_PAUSED" &&
      op.code !== "SOLD_OUT" &&
      op.outcome !== "unknown"
    )
      ctx.violation(`answered ${op.status} ${op.code ?? ""} while the sale was being recovered`);
  }
  ctx.fault(`buy answers until the sale settled: ${JSON.stringify(gap)}`);
  return { killedAt, quietEnds };
}
