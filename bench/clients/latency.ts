import type { LatencySummary } from "./protocol";

/** Nearest-rank percentile of an ascending array (`q` from 0 to 1). */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

/** count, mean, p50/p90/p99 and max of latencies in ms (rounded to 0.01 ms). */
export function summarize(values: number[] | Float64Array): LatencySummary {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  const round = (v: number) => Math.round(v * 100) / 100;
  return {
    count: sorted.length,
    mean: round(sorted.length ? sum / sorted.length : 0),
    p50: round(percentile(sorted, 0.5)),
    p90: round(percentile(sorted, 0.9)),
    p99: round(percentile(sorted, 0.99)),
    max: round(sorted.length ? (sorted[sorted.length - 1] as number) : 0),
  };
}
