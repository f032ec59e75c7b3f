/** The records of the server runtimes' rows (bench/runtimes.ts) and the small steps they share. */
import pg from "pg";
import type { operator } from "./admin";
import type { Check } from "./checks";
import { type Measured, perAttempt } from "./measures";
import { Meter, type Reading } from "./meter";
import type { PgStats } from "./pg-stats";
import type { LoadResult, PhaseSummary } from "./protocol";

/** A meter reading and the CPU µs (utime + stime) of the process under test at the same moment. */
export type CpuReading = { meter: Reading; cpu: number };

/** A phase with its costs; `serverCpuMicros` is the engine's (or naive server's) process per attempt. */
export type RuntimeMeasured = Measured & { serverCpuMicros: number };

export type RuntimeRow = {
  runtime: "deno" | "bun";
  engine: {
    load: Omit<LoadResult, "orderIds">;
    phases: RuntimeMeasured[];
    soldOutAtMs: number | null;
    drainedAtMs: number | null;
    /** The engine's first warning or error lines, if any. */
    errors: string[];
  };
  /** Per-outcome probes (QStash delivery paused): admitted, Bloom miss, sold out in a warm process. */
  probes: (RuntimeMeasured & { name: string; expect: string; expectedShare: number })[];
  naive: {
    http: "native" | "node";
    load: Omit<LoadResult, "orderIds">;
    phases: RuntimeMeasured[];
    units: number;
    orders: number;
    stockLeft: number;
  } | null;
  checks: Check[];
};

export function measured(phase: PhaseSummary, a: CpuReading, b: CpuReading): RuntimeMeasured {
  const costs = Meter.costs(a.meter, b.meter);
  const n = Math.max(1, phase.attempts);
  return {
    phase,
    costs,
    per: perAttempt(costs, phase.attempts),
    serverCpuMicros: Math.round(((b.cpu - a.cpu) / n) * 10) / 10,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls Postgres until `expected` orders of the sale are there; ms since `started`, or null (timeout). */
export async function waitForOrders(
  db: PgStats,
  saleId: string,
  expected: number,
  started: number,
): Promise<number | null> {
  const deadline = performance.now() + 180_000;
  while (performance.now() < deadline) {
    const [row] = await db.query<{ n: number }>("select count(*)::int as n from orders where sale_id = $1", [
      saleId,
    ]);
    if ((row?.n ?? 0) >= expected) return Math.round(performance.now() - started);
    await sleep(100);
  }
  return null;
}

/** Polls the operator's stats until no order of the sale is queued (the pipeline drained it). */
export async function waitForQueue(op: ReturnType<typeof operator>, saleId: string): Promise<void> {
  const deadline = performance.now() + 180_000;
  while (performance.now() < deadline && (await op.stats(saleId)).queued > 0) await sleep(250);
}

/** What the naive server sold: units and orders in its table, stock left on the hot row. */
export async function naiveTotals(
  naiveUrl: string,
): Promise<{ units: number; orders: number; stockLeft: number }> {
  const client = new pg.Client({ connectionString: naiveUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ units: number; orders: number; n: number }>(
      "select coalesce(sum(quantity), 0)::int as units, count(*)::int as orders, (select n from naive_stock where id = 1) as n from naive_orders",
    );
    const row = rows[0];
    return { units: row?.units ?? 0, orders: row?.orders ?? 0, stockLeft: row?.n ?? -1 };
  } finally {
    await client.end();
  }
}
