/** Polls the bench waits on while the order pipeline drains: Postgres's orders, the operator's queue. */
import type { operator } from "../clients/admin";
import type { PgStats } from "../measure/pg-stats";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
