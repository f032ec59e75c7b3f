/**
 * What a one-line buy costs the engine and Redis, today's single-variant sale against a drop, in the same
 * run: a one-variant sale bought with `{quantity}` (the path every sale took before variants), and a drop
 * of 12 sizes bought with `{variantId, quantity}` and with `{items:[one line]}`. Every attempt is admitted
 * (a new shopper, one unit, stock to spare); the kinds run in interleaved rounds (each starting with the
 * next kind) with QStash delivery paused, so the order pipeline mixes nothing in. Per admitted attempt:
 * workerd CPU (/proc), Redis's own µs per EVALSHA (INFO commandstats) and redis-server CPU; each the median
 * of its rounds.
 *
 * @example
 * const rows = await oneLineCostPhase(bench, { rounds: 9, calls: 1_000 });
 */
import { DROP_SIZES } from "../clients/drop-carts";
import type { ListPlan } from "../clients/protocol";
import { clientIp } from "../clients/scenario";
import { type Costs, Meter } from "../measure/meter";
import { waitForQueue } from "./waits";
import { buyTarget, quietList, type WorkersBench } from "./workers-bench";

export type OneLineRow = {
  kind: string;
  admitted: number;
  /** medians over the rounds */
  engineCpuMicros: number;
  evalshaMicros: number;
  evalshaPerAdmitted: number;
  redisCpuMicros: number;
  /**
   * this row over the first (the single-variant sale), engine CPU and Redis µs per EVALSHA: the median of
   * the rounds' ratios (each round's kinds ran back to back, so other work on the machine moves both)
   */
  engineRatio: number;
  redisRatio: number;
  /** the rounds' ratios from the first to the third quartile: how far other work on the machine moved them */
  engineRatioQuartiles: [number, number];
  redisRatioQuartiles: [number, number];
  rounds: { engineCpuMicros: number; evalshaMicros: number }[];
};

type Kind = { kind: string; token: string; body: (i: number) => string };

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q + 0.5)] ?? Number.NaN;
const median = (xs: number[]) => quantile(xs, 0.5);
const round2 = (v: number) => Math.round(v * 100) / 100;

export async function oneLineCostPhase(
  bench: WorkersBench,
  o: { rounds: number; calls: number },
): Promise<OneLineRow[]> {
  const { op, meter, run, log } = bench;
  log(
    `\none-line buy: a single-variant sale against a drop of 12, ${o.rounds} interleaved rounds of ${o.calls} admitted attempts (QStash delivery paused)`,
  );
  const units = (o.rounds + 1) * o.calls * 2;
  const single = await op.createSale(`one-line-single-${run}`, units, 2);
  const drop = await op.createDrop(`one-line-drop-${run}`, DROP_SIZES, units, {
    perUserLimit: 2,
    paymentWindowSeconds: 3_600,
  });
  const size = (i: number) => DROP_SIZES[i % DROP_SIZES.length] as string;
  const kinds: Kind[] = [
    { kind: "single-variant sale, {quantity}", token: single.productToken, body: () => `{"quantity":1}` },
    {
      kind: "drop of 12, {variantId, quantity}",
      token: drop.productToken,
      body: (i) => JSON.stringify({ variantId: size(i), quantity: 1 }),
    },
    {
      kind: "drop of 12, {items: [one line]}",
      token: drop.productToken,
      body: (i) => JSON.stringify({ items: [{ variantId: size(i), quantity: 1 }] }),
    },
  ];
  let next = 0;
  const items = (k: number, n: number): ListPlan["items"] =>
    Array.from({ length: n }, (_, i) => {
      const u = 3_000_000 + next++;
      return { user: `ol-${run}-${u}`, quantity: 1, ip: clientIp(u), body: (kinds[k] as Kind).body(i) };
    });
  await meter.qstashDelivery(false);
  const perKind = kinds.map(() => [] as { costs: Costs; admitted: number }[]);
  try {
    for (const [k, kind] of kinds.entries())
      await quietList(bench, `warm ${kind.kind}`, buyTarget(bench, kind.token), items(k, 50));
    for (let round = 0; round < o.rounds; round++)
      // each round starts with another kind, so a trend on the machine favours none of them
      for (const k of kinds.map((_, j) => (j + round) % kinds.length)) {
        const kind = kinds[k] as Kind;
        const a = await meter.read({ pg: false });
        const res = await quietList(bench, kind.kind, buyTarget(bench, kind.token), items(k, o.calls));
        const b = await meter.read({ pg: false });
        const admitted = res.phases[0]?.byOutcome["202"]?.count ?? 0;
        if (admitted !== o.calls)
          log(
            `  ${kind.kind}, round ${round + 1}: ${admitted} of ${o.calls} admitted (${JSON.stringify(res.phases[0]?.byOutcome && Object.keys(res.phases[0].byOutcome))})`,
          );
        perKind[k]?.push({ costs: Meter.costs(a, b), admitted });
      }
  } finally {
    await meter.qstashDelivery(true);
  }
  await waitForQueue(op, single.saleId);
  await waitForQueue(op, drop.saleId);
  const rows = kinds.map((kind, k) => {
    const runs = perKind[k] ?? [];
    const rounds = runs.map(({ costs, admitted }) => ({
      engineCpuMicros: (costs.cpu.workerd ?? Number.NaN) / Math.max(1, admitted),
      evalshaMicros: costs.redis.scripts.usec / Math.max(1, costs.redis.scripts.calls),
      evalshaPerAdmitted: costs.redis.scripts.calls / Math.max(1, admitted),
      redisCpuMicros: costs.redis.cpuMicros / Math.max(1, admitted),
    }));
    return {
      kind: kind.kind,
      admitted: runs.reduce((n, r) => n + r.admitted, 0),
      engineCpuMicros: Math.round(median(rounds.map((r) => r.engineCpuMicros))),
      evalshaMicros: round2(median(rounds.map((r) => r.evalshaMicros))),
      evalshaPerAdmitted: round2(median(rounds.map((r) => r.evalshaPerAdmitted))),
      redisCpuMicros: Math.round(median(rounds.map((r) => r.redisCpuMicros))),
      engineRatio: 1,
      redisRatio: 1,
      engineRatioQuartiles: [1, 1] as [number, number],
      redisRatioQuartiles: [1, 1] as [number, number],
      rounds: rounds.map((r) => ({
        engineCpuMicros: Math.round(r.engineCpuMicros),
        evalshaMicros: round2(r.evalshaMicros),
      })),
    };
  });
  const base = rows[0] as OneLineRow;
  const ratios = (r: OneLineRow, pick: (x: OneLineRow["rounds"][number]) => number) =>
    r.rounds.map((x, i) => pick(x) / pick(base.rounds[i] as OneLineRow["rounds"][number]));
  const q = (xs: number[]): [number, number] => [round2(quantile(xs, 0.25)), round2(quantile(xs, 0.75))];
  for (const r of rows) {
    const engine = ratios(r, (x) => x.engineCpuMicros);
    const redis = ratios(r, (x) => x.evalshaMicros);
    r.engineRatio = round2(median(engine));
    r.redisRatio = round2(median(redis));
    r.engineRatioQuartiles = q(engine);
    r.redisRatioQuartiles = q(redis);
  }
  return rows;
}
