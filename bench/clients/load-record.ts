/**
 * What the load generator keeps per attempt (typed arrays: a run has up to ~130,000 attempts) and what it
 * makes of them: latency per phase and outcome, and answers per time slice for the chart.
 */
import { summarize } from "./latency";
import type { Bucket, PhaseSummary } from "./protocol";

export type AttemptRecord = {
  latency: Float64Array;
  /** ms from the run's start to the answer. */
  finished: Float64Array;
  /** Index into `labels`. */
  outcome: Uint16Array;
  phaseOf: Uint8Array;
  labels: string[];
  labelIndex: Map<string, number>;
  /** Order id → units, of every order a 2xx answer named. */
  orders: Map<string, number>;
  /** Order id → the index of the first attempt whose answer named it. */
  orderAttempt: Map<string, number>;
};

export function attemptRecord(count: number): AttemptRecord {
  return {
    latency: new Float64Array(count),
    finished: new Float64Array(count),
    outcome: new Uint16Array(count),
    phaseOf: new Uint8Array(count),
    labels: [],
    labelIndex: new Map(),
    orders: new Map(),
    orderAttempt: new Map(),
  };
}

/** Records attempt `i`'s answer. */
export function record(
  rec: AttemptRecord,
  i: number,
  label: string,
  latency: number,
  finished: number,
): void {
  rec.latency[i] = latency;
  rec.finished[i] = finished;
  let index = rec.labelIndex.get(label);
  if (index === undefined) {
    index = rec.labels.push(label) - 1;
    rec.labelIndex.set(label, index);
  }
  rec.outcome[i] = index;
}

/** Latency per phase and per outcome; a phase lasts from its start to its last answer. */
export function phaseSummaries(
  rec: AttemptRecord,
  phaseNames: string[],
  phaseStart: number[],
): PhaseSummary[] {
  return phaseNames.map((name, p) => {
    const all: number[] = [];
    const per = new Map<string, number[]>();
    let last = phaseStart[p] as number;
    for (let i = 0; i < rec.latency.length; i++) {
      if (rec.phaseOf[i] !== p) continue;
      const v = rec.latency[i] as number;
      all.push(v);
      const label = rec.labels[rec.outcome[i] as number] as string;
      const values = per.get(label);
      if (values) values.push(v);
      else per.set(label, [v]);
      last = Math.max(last, rec.finished[i] as number);
    }
    const durationMs = last - (phaseStart[p] as number);
    return {
      phase: name,
      attempts: all.length,
      durationMs: Math.round(durationMs),
      attemptsPerSecond: durationMs > 0 ? Math.round((all.length / durationMs) * 1000) : 0,
      latency: summarize(all),
      byOutcome: Object.fromEntries([...per].map(([label, values]) => [label, summarize(values)])),
    };
  });
}

export function sumUnits(orders: Map<string, number>): number {
  let units = 0;
  for (const q of orders.values()) units += q;
  return units;
}

/** Answers per time slice (about 300 slices over the run, or `fixedMs` each) for the chart. */
export function buckets(
  finished: Float64Array,
  latency: Float64Array,
  outcome: Uint16Array,
  labels: string[],
  include: (i: number) => boolean = () => true,
  fixedMs = 0,
): { buckets: Bucket[]; bucketMs: number } {
  let end = 0;
  for (const t of finished) end = Math.max(end, t);
  const bucketMs = fixedMs || Math.max(100, Math.ceil(end / 300 / 50) * 50);
  const groups: { lat: number[]; byOutcome: Record<string, number> }[] = [];
  finished.forEach((t, i) => {
    if (!include(i)) return;
    const b = Math.floor(t / bucketMs);
    while (groups.length <= b) groups.push({ lat: [], byOutcome: {} });
    const g = groups[b] as (typeof groups)[number];
    g.lat.push(latency[i] as number);
    const label = labels[outcome[i] as number] as string;
    g.byOutcome[label] = (g.byOutcome[label] ?? 0) + 1;
  });
  return {
    bucketMs,
    buckets: groups.map((g, b) => {
      const s = summarize(g.lat);
      return { t: b * bucketMs, count: s.count, p50: s.p50, p99: s.p99, byOutcome: g.byOutcome };
    }),
  };
}
