/**
 * The drop crowd against the worker: a drop of 12 sizes of `units` each, a limit of 2 units per shopper
 * across the drop, `shoppers` shoppers with random carts of 1 to 3 lines (half the demand on two sizes,
 * bench/clients/drop-carts.ts) sent by the forked load generator. Then a third of the orders cancelled
 * and a fifth paid by their shoppers, the rest left to expire (a short payment window), and the pipeline
 * drained. Checked per variant twice, after the cancellations and after the last expiry
 * (bench/measure/drop-checks.ts).
 *
 * @example
 * const drop = await dropCrowdPhase(bench, { shoppers: 100_000, units: 100, paymentWindowSeconds: 60 });
 * if (drop.checks.some((c) => !c.ok)) process.exitCode = 1;
 */
import { Redis } from "ioredis";
import { DROP_SIZES, dropCrowd } from "../clients/drop-carts";
import type { LatencySummary, LoadResult, Target } from "../clients/protocol";
import { type DropInput, dropChecks, type VariantFigures } from "../measure/drop-checks";
import type { Check } from "../measure/measures";
import { Meter } from "../measure/meter";
import type { PgStats } from "../measure/pg-stats";
import { sleep, waitForOrders, waitForQueue } from "./waits";
import { buyTarget, planBase, type WorkersBench } from "./workers-bench";

export type DropOptions = { shoppers: number; units: number; paymentWindowSeconds: number };

export type DropResult = DropOptions & {
  attempts: number;
  attemptsPerSecond: number;
  latency: LatencySummary;
  byOutcome: Record<string, number>;
  /** workerd and load-generator CPU per attempt over the crowd, µs */
  engineCpuMicrosPerAttempt: number | null;
  loadCpuMicrosPerAttempt: number;
  orders: number;
  cancels: Record<string, number>;
  payments: Record<string, number>;
  byStatus: Record<string, number>;
  variants: VariantFigures[];
  checks: Check[];
};

const PER_USER_LIMIT = 2;

const counts = (r: LoadResult) =>
  Object.fromEntries(Object.entries(r.phases[0]?.byOutcome ?? {}).map(([k, v]) => [k, v.count]));

/** The answered orders' own shoppers: every third cancels, every fifth (not cancelling) pays. */
async function cancelAndPay(bench: WorkersBench, crowd: ReturnType<typeof dropCrowd>, res: LoadResult) {
  const owner = (i: number) => crowd.items[res.orderAttempts[i] as number] as (typeof crowd.items)[number];
  const call = (action: "cancel" | "pay", pick: (i: number) => boolean) => {
    const target: Target = {
      baseUrl: bench.env.workerUrl,
      path: `/api/orders/{token}/${action}`,
      method: "POST",
    };
    const items = res.orderIds.flatMap((id, i) =>
      pick(i) ? [{ user: owner(i).user, ip: owner(i).ip, quantity: 0, token: id, body: "" }] : [],
    );
    return bench.load.run({ kind: "list", label: `drop ${action}`, target, items, ...planBase(bench) });
  };
  const cancels = await call("cancel", (i) => i % 3 === 0);
  const payments = await call("pay", (i) => i % 3 !== 0 && i % 5 === 0);
  return { cancels: counts(cancels), payments: counts(payments) };
}

/** Polls Postgres until no order of the sale awaits payment (every unpaid order expired), or a deadline. */
async function waitForExpiries(pg: PgStats, saleId: string, deadlineMs: number): Promise<number> {
  const deadline = performance.now() + deadlineMs;
  for (;;) {
    const [row] = await pg.query<{ n: number }>(
      "select count(*)::int as n from orders where sale_id = $1 and status = 'awaiting_payment'",
      [saleId],
    );
    if ((row?.n ?? 0) === 0 || performance.now() > deadline) return row?.n ?? 0;
    await sleep(1_000);
  }
}

export async function dropCrowdPhase(bench: WorkersBench, o: DropOptions): Promise<DropResult> {
  const { env, load, meter, op, run, log } = bench;
  const pg = meter.pg as PgStats;
  log(
    `\ndrop crowd: ${o.shoppers.toLocaleString("en-US")} shoppers, 12 sizes of ${o.units}, limit ${PER_USER_LIMIT} across the drop, payment window ${o.paymentWindowSeconds} s`,
  );
  const sale = await op.createDrop(`drop-${run}`, DROP_SIZES, o.units, {
    perUserLimit: PER_USER_LIMIT,
    paymentWindowSeconds: o.paymentWindowSeconds,
  });
  const crowd = dropCrowd({ shoppers: o.shoppers, seed: bench.options.seed, tag: `d-${run}` });
  const target = buyTarget(bench, sale.productToken);
  const r0 = await meter.read({ pg: false });
  const res = await load.run({
    kind: "list",
    label: "drop crowd",
    target,
    items: crowd.items,
    ...planBase(bench),
  });
  const costs = Meter.costs(r0, await meter.read({ pg: false }));
  const t = performance.now();
  const acted = await cancelAndPay(bench, crowd, res);
  await waitForOrders(pg, sale.saleId, res.reservedOrders, t);
  await waitForQueue(op, sale.saleId);

  const input: DropInput = {
    saleId: sale.saleId,
    variants: DROP_SIZES,
    units: o.units,
    perUserLimit: PER_USER_LIMIT,
    carts: crowd.carts,
    orderIds: res.orderIds,
    orderAttempts: res.orderAttempts,
  };
  const redis = new Redis(env.redisUrl);
  try {
    const sources = { pg, redis, stats: () => op.stats(sale.saleId) };
    const live = await dropChecks("after the cancellations", sources, input);
    log(
      `  after the cancellations: ${JSON.stringify(live.byStatus)}; waiting for the unpaid orders to expire …`,
    );
    const waiting = await waitForExpiries(pg, sale.saleId, (o.paymentWindowSeconds + 180) * 1_000);
    await waitForQueue(op, sale.saleId);
    const final = await dropChecks("after the drain", sources, input);
    const [unrestored] = await pg.query<{ n: number }>(
      "select count(*)::int as n from orders where sale_id = $1 and status in ('expired', 'cancelled') and restored_at is null",
      [sale.saleId],
    );
    const expired = final.byStatus.expired ?? 0;
    const cancelled = final.byStatus.cancelled ?? 0;
    final.checks.push({
      name: "after the drain: orders expired and cancelled, each marked given back, none awaiting payment",
      ok: expired > 0 && cancelled > 0 && waiting === 0 && (unrestored?.n ?? 0) === 0,
      detail: `${expired} expired, ${cancelled} cancelled, ${unrestored?.n ?? 0} not marked restored, ${waiting} still awaiting payment`,
    });
    const phase = res.phases[0];
    return {
      ...o,
      attempts: res.attempts,
      attemptsPerSecond: phase?.attemptsPerSecond ?? 0,
      latency: phase?.latency as LatencySummary,
      byOutcome: counts(res),
      engineCpuMicrosPerAttempt:
        costs.cpu.workerd === null ? null : Math.round(costs.cpu.workerd / Math.max(1, res.attempts)),
      loadCpuMicrosPerAttempt: Math.round(res.cpuMicros / Math.max(1, res.attempts)),
      orders: res.reservedOrders,
      ...acted,
      byStatus: final.byStatus,
      variants: final.variants,
      checks: [...live.checks, ...final.checks],
    };
  } finally {
    redis.disconnect();
  }
}
