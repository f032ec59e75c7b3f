/**
 * The drops' terminal lines (bench/drop-crowd.ts): the one-line buy's rows, the drop crowd's figures and
 * its checks.
 */
import type { DropResult } from "../phases/drop-crowd";
import type { OneLineRow } from "../phases/one-line-cost";

/** The phase's figures and checks, as lines for the terminal. */
export function printDrop(d: DropResult, log: (line: string) => void): void {
  const ms = (v: number) => (v < 10 ? v.toFixed(1) : String(Math.round(v)));
  log(
    `\ndrop crowd: ${d.attempts.toLocaleString("en-US")} attempts by ${d.shoppers.toLocaleString("en-US")} shoppers · ${d.attemptsPerSecond.toLocaleString("en-US")} attempts/s · p50 ${ms(d.latency.p50)} ms · p99 ${ms(d.latency.p99)} ms · workerd ${d.engineCpuMicrosPerAttempt ?? "?"} µs CPU per attempt (load generator ${d.loadCpuMicrosPerAttempt} µs, not counted)`,
  );
  log(`  answers: ${JSON.stringify(d.byOutcome)}`);
  log(`  ${d.orders} orders; cancel ${JSON.stringify(d.cancels)}; pay ${JSON.stringify(d.payments)}`);
  log(`  at the end: ${JSON.stringify(d.byStatus)}`);
  log("  variant   stock  live units  remaining (Redis)  stats remaining/live/pending");
  for (const v of d.variants)
    log(
      `  ${v.variantId.padEnd(8)} ${String(v.stock).padStart(6)} ${String(v.liveUnits).padStart(11)} ${String(v.redisRemaining).padStart(18)}  ${v.stats.remaining}/${v.stats.liveUnits}/${v.stats.pendingRestoreUnits}`,
    );
  for (const c of d.checks) log(`  ${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.detail}`);
}

export function printOneLine(rows: OneLineRow[], log: (line: string) => void): void {
  log(
    "\none-line buy, per admitted attempt (median of the rounds; ratio to the single-variant sale: median of",
  );
  log("the rounds' ratios, their quartiles in brackets)");
  log(
    `  ${"kind".padEnd(34)} workerd µs  ratio               EVALSHA µs  ratio               per attempt  redis CPU µs`,
  );
  const ratio = (r: number, [lo, hi]: [number, number]) =>
    `${r.toFixed(2)}× [${lo.toFixed(2)}–${hi.toFixed(2)}]`.padEnd(18);
  for (const r of rows)
    log(
      `  ${r.kind.padEnd(34)} ${String(r.engineCpuMicros).padStart(10)}  ${ratio(r.engineRatio, r.engineRatioQuartiles)} ${r.evalshaMicros.toFixed(2).padStart(10)}  ${ratio(r.redisRatio, r.redisRatioQuartiles)} ${String(r.evalshaPerAdmitted).padStart(11)}  ${String(r.redisCpuMicros).padStart(12)}`,
    );
}
