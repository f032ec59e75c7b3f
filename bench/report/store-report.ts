/** The report's second half: the order pipeline, the store level, capacity, ratios and the goals. */
import type { BenchResult } from "../measure/measures";
import { UPSTASH_COMMANDS_PER_SECOND } from "./summary";
import { type Cell, fmt, round, table } from "./table";

type Out = (s?: string) => void;

export function printStore(r: BenchResult, out: Out): void {
  printPipeline(r, out);
  printStoreLevel(r, out);
  printCapacity(r, out);
  printRatios(r, out);
  out("\nGoals (issue 5)");
  out(
    table(
      ["goal", "measured", "met"],
      r.goals.map((g) => [g.goal, g.measured, g.met ? "yes" : "NO"]),
    ),
  );
}

function printPipeline(r: BenchResult, out: Out): void {
  const pl = r.project.pipeline;
  out("\nOrder pipeline (seed-000 sale)");
  out(
    `  sold out after ${r.project.soldOutAtMs ?? "–"} ms (first SOLD_OUT answer) · every order in Postgres after ${r.project.drainedAtMs ?? "–"} ms (${r.project.drainedAtMs && r.project.soldOutAtMs ? r.project.drainedAtMs - r.project.soldOutAtMs : "–"} ms after sell-out)`,
  );
  out(
    `  ${pl.orders} orders, ${pl.units} units · per order: QStash messages published ${pl.qstashPublishedPerOrder ?? "–"}, deliveries ${pl.qstashDeliveriesPerOrder ?? "–"} · Postgres statements ${pl.pgStatementsPerOrder ?? "–"} (${r.meta.postgres.statements}), transactions ${pl.pgTransactionsPerOrder ?? "–"} (pg_stat_database)`,
  );
  for (const s of pl.costs.pg?.topStatements.slice(0, 5) ?? [])
    out(`    ${String(s.calls).padStart(6)} × ${s.query.slice(0, 110)}`);

  const pa = r.pipelineAlone;
  if (pa && pa.orders > 0) {
    const o = (v: number | null | undefined, d = 1) =>
      v === null || v === undefined ? "–" : round(v / pa.orders, d);
    out(
      `  pipeline alone (probe orders delivered with nothing else running): ${pa.orders} orders in ${pa.drainedMs ?? "–"} ms · per order: worker CPU ${o(pa.costs.cpu.workerd, 0)} µs, stand-ins CPU ${o(pa.costs.cpu.standIns, 0)} µs, Postgres CPU ${o(pa.costs.cpu.postgres, 0)} µs, Redis ${o(pa.costs.redis.scripts.calls + pa.costs.redis.otherCalls, 2)} commands, Postgres statements ${o(pa.costs.pg?.statements, 2)}, transactions ${o(pa.costs.pg?.transactions, 2)}, QStash deliveries ${o(pa.costs.qstash?.attempts, 2)}`,
    );
  }
}

function printStoreLevel(r: BenchResult, out: Out): void {
  out("\nStore level");
  const storeRows: Cell[][] = r.redisDirect.map((d) => [
    `Redis: reservation script direct, ${d.path}`,
    `redis-benchmark EVALSHA -c ${d.clients} -P ${d.pipeline}`,
    d.perSecond,
    d.p99Ms,
    round(d.redis.scripts.usec / Math.max(1, d.redis.scripts.calls), 2),
    round(d.redis.cpuMicros / Math.max(1, d.requests), 1),
    round(d.redis.otherCalls / Math.max(1, d.redis.scripts.calls), 1),
  ]);
  for (const h of r.hotRows)
    storeRows.push([
      "Postgres: hot-row transaction direct",
      `pg, ${h.clients} connections`,
      h.perSecond,
      h.latency.p99,
      null,
      h.postgresCpuMicrosPerTx,
      null,
    ]);
  out(table(["path", "how", "per second", "p99 ms", "exec µs", "server CPU µs", "cmds inside"], storeRows));
}

function printCapacity(r: BenchResult, out: Out): void {
  out("\nCapacity (what one deployment's store carries)");
  const c = r.capacity;
  out(
    `  one Upstash database (cap ${UPSTASH_COMMANDS_PER_SECOND.toLocaleString("en-US")} commands/s): ${fmt(c.upstashAttemptsPerSecondAdmitted)} admitted attempts/s · ${fmt(c.upstashAttemptsPerSecondRushMix)} attempts/s of the rush mix · ${fmt(c.upstashAttemptsPerSecondAfterMix)} after sell-out`,
  );
  out(
    `  one Redis core: ${fmt(c.redisCoreAttemptsPerSecondByExecTime)} admitted attempts/s by script execution time, ${fmt(c.redisCoreAttemptsPerSecondByCpu)} by redis-server CPU`,
  );
  out(
    `  Postgres hot row: ${fmt(c.postgresHotRowPerSecond)} reservations/s direct, ${fmt(c.naiveRushPerSecond)} attempts/s behind the naive server in the rush`,
  );
}

function printRatios(r: BenchResult, out: Out): void {
  out("\nRatios");
  const q = r.ratios;
  out(
    `  project ÷ naive Postgres, end to end: rush ${q.projectOverNaiveRush ?? "–"}×, after sell-out ${q.projectOverNaiveAfter ?? "–"}×`,
  );
  out(
    `  project ÷ no-op route: whole crowd ${q.projectOverNoopOverall ?? "–"}×, after sell-out ${q.projectOverNoopAfter ?? "–"}×`,
  );
  out(
    `  store capacity, Redis path ÷ Postgres hot row: ${q.storeRedisScriptOverPostgresHotRow ?? "–"}× (script direct), ${q.storeRedisCoreCpuOverPostgresHotRow ?? "–"}× (one Redis core by CPU)`,
  );
}
