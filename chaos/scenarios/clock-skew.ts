import { readFileSync } from "node:fs";
import { join } from "node:path";
import { newOrderId } from "../../src/ids";
import { deliverJob } from "../../test/support/jobs";
import { reserve } from "../../test/support/lua";
import type { Scenario, ScenarioContext } from "../scenario";
import { random } from "../workload";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SKEW_MS = 2_000;

/**
 * Clock skew. workerd cannot run one isolate on a skewed clock, so the scenario checks the two facts
 * that make skew harmless, under the workload, on a sale that opens and closes during the run:
 *
 * 1. The sale window is decided by the time the reservation script is given: the script reads no clock
 *    (no TIME), and "isolates" skewed by up to ±2 s (the script run directly with a skewed `now`) get
 *    NOT_STARTED exactly when their `now` is before the start, ENDED exactly when it is at or after the
 *    end, and a reservation otherwise. The worker gives it the store's time (src/stores/store-clock.ts:
 *    Redis TIME plus the offset it measured), so its own clock's skew does not move the window; its
 *    answers agree with the clock of the machine both run on: no 202 before the start or after the
 *    end, no NOT_STARTED after it opened, no ENDED before it closed.
 * 2. Payment and expiry are decided by Postgres's clock alone: a payment-timeout job that a worker with
 *    a fast clock sent early (its body says the window closed) is refused as early and the order stays
 *    payable; and an order whose window Postgres considers closed (its `expires_at` moved back, which is
 *    Postgres's clock running ahead of the worker's) cannot be paid, even though the worker's own record
 *    of the order (Redis, the 202's `expiresAt`) says the window is open; its units come back once.
 */
export const clockSkew: Scenario = {
  name: "clock-skew",
  title: "Clock skew: the window by the script's given time, payment by Postgres's clock",
  sale: (size) => ({ stock: size === "ci" ? 150 : 400, paymentWindowSeconds: 6 }),
  async run(ctx) {
    const script = readFileSync(join(import.meta.dirname, "../../lua/reserve-stock.lua"), "utf8");
    if (/redis\.call\(\s*["']TIME["']/i.test(script))
      ctx.violation("reserve-stock.lua reads Redis's clock (TIME)");
    const { startsAt, endsAt } = await reopen(ctx);
    ctx.fault(
      `sale opens ${new Date(startsAt).toISOString()} and closes ${(endsAt - startsAt) / 1000} s later`,
    );
    ctx.fault(`isolates skewed by up to ±${SKEW_MS / 1000} s (script given a skewed now)`);
    const runMs = endsAt - Date.now() + 1_500;
    await Promise.all([
      ctx.workload({ durationMs: runMs }),
      skewedIsolates(ctx, startsAt, endsAt, runMs),
      postgresDecidesPayment(ctx, startsAt),
    ]);
    checkWorkerAnswers(ctx, startsAt, endsAt);
  },
};

/** Moves the sale's window to start shortly and close a few seconds later (the stores both agree). */
async function reopen(ctx: ScenarioContext): Promise<{ startsAt: number; endsAt: number }> {
  const startsAt = Date.now() + ctx.ms(2_000, 4_000);
  const endsAt = startsAt + ctx.ms(6_000, 20_000);
  const { saleKeys } = await import("../../src/stock/keys");
  await ctx.app.db.query("update sales set starts_at = $2, ends_at = $3 where id = $1", [
    ctx.sale.saleId,
    new Date(startsAt),
    new Date(endsAt),
  ]);
  await ctx.app.redis.hset(saleKeys(ctx.sale.saleId).meta, { startsAt, endsAt });
  return { startsAt, endsAt };
}

async function skewedIsolates(ctx: ScenarioContext, startsAt: number, endsAt: number, runMs: number) {
  const rnd = random(11);
  const until = Date.now() + runMs;
  let checked = 0;
  for (let i = 0; Date.now() < until; i++) {
    const skew = Math.round((rnd() * 2 - 1) * SKEW_MS);
    const now = Date.now() + skew;
    const userId = `skewed${i % 25}`;
    const orderId = newOrderId(ctx.sale.saleId);
    const idempotencyKey = `skew-${i}`;
    const op = ctx.history.invoke({
      kind: "buy",
      userId,
      quantity: 1,
      idempotencyKey,
      orderId,
      via: "script",
    });
    const reply = await reserve(ctx.app.redis, ctx.sale.saleId, {
      orderId,
      userId,
      quantity: 1,
      now,
      idem: idempotencyKey,
    });
    const code = Number(reply[0]);
    ctx.history.complete(
      op,
      code === 1
        ? { outcome: "ok", status: 202, note: `skew ${skew} ms` }
        : { outcome: "failed", status: 409, code: `script ${code}`, note: `skew ${skew} ms` },
    );
    const expected = now < startsAt ? 4 : now >= endsAt ? 5 : null;
    if (expected !== null && code !== expected)
      ctx.violation(
        `script given now ${now - startsAt} ms from the start answered ${code}, expected ${expected}`,
      );
    if (expected === null && (code === 4 || code === 5))
      ctx.violation(
        `script given now inside the window (${now - startsAt} ms after the start) answered ${code}`,
      );
    checked++;
    await sleep(80 + rnd() * 120);
  }
  ctx.fault(`${checked} skewed script calls checked against their given now`);
}

async function postgresDecidesPayment(ctx: ScenarioContext, startsAt: number) {
  await sleep(startsAt - Date.now() + 300);
  const { client, app, sale } = ctx;
  // a worker whose clock runs ahead sends the payment timeout early: Postgres says the window is open
  const early = await client.buy(sale.productToken, "fast-clock", 1, "fast-clock-0");
  if (early.outcome === "ok" && early.orderId && (await written(ctx, early.orderId, "fast-clock"))) {
    const job = {
      orderId: early.orderId,
      saleId: sale.saleId,
      userId: "fast-clock",
      quantity: 1,
      createdAt: Date.now() - 5_000,
      expiresAt: Date.now() - 1_000,
    };
    const res = await deliverJob(app, "/api/jobs/payment-timeout", job);
    if (res.status !== 409)
      ctx.violation(
        `an early payment timeout answered ${res.status} ${res.text}, expected 409 ORDER_NOT_READY`,
      );
    const paid = await client.act("pay", early.orderId, "fast-clock");
    if (paid.status !== 200) ctx.violation(`pay after an early timeout answered ${paid.status} ${paid.code}`);
  } else ctx.violation(`buy for the early-timeout probe answered ${early.status} ${early.code}`);

  // Postgres's clock ahead of the worker: the worker thinks the window is open, Postgres does not
  const late = await client.buy(sale.productToken, "slow-clock", 2, "slow-clock-0");
  if (late.outcome === "ok" && late.orderId && (await written(ctx, late.orderId, "slow-clock"))) {
    await app.db.query("update orders set expires_at = now() - interval '1 second' where id = $1", [
      late.orderId,
    ]);
    const pay = await client.act("pay", late.orderId, "slow-clock");
    if (pay.code !== "ORDER_EXPIRED")
      ctx.violation(`pay of an order Postgres considers expired answered ${pay.status} ${pay.code ?? ""}`);
  } else ctx.violation(`buy for the late-payment probe answered ${late.status} ${late.code}`);
  ctx.fault("an early payment timeout; a payment after Postgres's clock closed the window");
}

/** Polls the order until Postgres has it (the probes must not race the order write). */
async function written(ctx: ScenarioContext, orderId: string, userId: string): Promise<boolean> {
  for (let i = 0; i < 40; i++) {
    if ((await ctx.client.get(orderId, userId)).orderStatus === "awaiting_payment") return true;
    await sleep(100);
  }
  ctx.violation(`order ${orderId} was not written within 4 s`);
  return false;
}

/** The real worker's window answers against the client's clock (same host as workerd). */
function checkWorkerAnswers(ctx: ScenarioContext, startsAt: number, endsAt: number) {
  for (const op of ctx.history.ops) {
    if (op.kind !== "buy" || op.via !== "api" || op.completedAt === undefined) continue;
    if (op.outcome === "ok" && (op.completedAt < startsAt || op.invokedAt >= endsAt))
      ctx.violation(`a 202 outside the window (invoked ${op.invokedAt - startsAt} ms after the start)`);
    if (op.code === "SALE_NOT_STARTED" && op.invokedAt >= startsAt)
      ctx.violation(`SALE_NOT_STARTED ${op.invokedAt - startsAt} ms after the start`);
    if (op.code === "SALE_ENDED" && op.completedAt < endsAt)
      ctx.violation(`SALE_ENDED ${endsAt - op.completedAt} ms before the end`);
  }
}
