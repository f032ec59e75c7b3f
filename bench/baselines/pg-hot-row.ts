/**
 * The store-level baseline for Postgres: the naive transaction (`naive-server.ts`) run directly by
 * `clients` connections for `durationMs`, no HTTP in between, on a stock too large to sell out: how many
 * reservations per second one hot row takes. Run as a child process by `run.ts`
 * (`NAIVE_DATABASE_URL`, `HOT_ROW_CLIENTS`, `HOT_ROW_MS`); it answers over IPC.
 */
import pg from "pg";
import { summarize } from "../clients/latency";
import type { LatencySummary } from "../clients/protocol";

export type HotRowResult = {
  clients: number;
  transactions: number;
  perSecond: number;
  latency: LatencySummary;
};

export async function hotRow(
  databaseUrl: string,
  clients: number,
  durationMs: number,
): Promise<HotRowResult> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: clients });
  const latencies: number[] = [];
  const t0 = performance.now();
  const deadline = t0 + durationMs;
  const lane = async (n: number) => {
    const client = await pool.connect();
    try {
      for (let i = 0; performance.now() < deadline; i++) {
        const started = performance.now();
        await client.query("BEGIN");
        await client.query("UPDATE naive_stock SET n = n - $1 WHERE id = 1 AND n >= $1 RETURNING n", [1]);
        await client.query("INSERT INTO naive_orders (user_id, quantity) VALUES ($1, $2) RETURNING id", [
          `hot-${n}-${i}`,
          1,
        ]);
        await client.query("COMMIT");
        latencies.push(performance.now() - started);
      }
    } finally {
      client.release();
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, n) => lane(n)));
  const elapsed = performance.now() - t0;
  await pool.end();
  return {
    clients,
    transactions: latencies.length,
    perSecond: Math.round((latencies.length / elapsed) * 1000),
    latency: summarize(latencies),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  hotRow(
    process.env.NAIVE_DATABASE_URL ?? "",
    Number(process.env.HOT_ROW_CLIENTS ?? 50),
    Number(process.env.HOT_ROW_MS ?? 5_000),
  )
    .then((result) => process.send?.({ type: "done", result }))
    .catch((e: unknown) => process.send?.({ type: "error", message: String(e) }));
}
