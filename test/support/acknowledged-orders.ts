import { expect } from "vitest";
import type { AppUnderTest } from "./app";

/**
 * A sale sold out exactly through a store's loss or failover: every unit to one acknowledged order, each
 * of them written to Postgres once the jobs are delivered (none lost with the store), nothing more, and
 * the operator's invariant holding.
 *
 * @example
 * await expectEveryAcknowledgedWritten(app, sale.saleId, acknowledged, STOCK);
 */
export async function expectEveryAcknowledgedWritten(
  app: AppUnderTest,
  saleId: string,
  acknowledged: Set<string>,
  stock: number,
): Promise<void> {
  expect(acknowledged.size).toBe(stock);
  await app.drain(30_000);
  const rows = await app.db.query<{ id: string }>(
    "SELECT id FROM orders WHERE sale_id = $1 AND status IN ('awaiting_payment', 'paid')",
    [saleId],
  );
  expect(new Set(rows.rows.map((r) => r.id))).toEqual(acknowledged);
  const stats = await app.api.stats(saleId);
  expect(stats.body).toMatchObject({ stock, remaining: 0, invariantHolds: true });
}
