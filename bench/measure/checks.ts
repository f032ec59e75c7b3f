/**
 * The invariant at the end of a run, from three independent sources: the operator's stats (Redis and
 * Postgres as the worker sees them), Postgres read directly, and the 202 answers the crowd received.
 */
import type { operator } from "../clients/admin";
import type { LoadResult } from "../clients/protocol";
import type { Check } from "./measures";
import type { PgStats } from "./pg-stats";

export type { Check };

type Input = {
  op: ReturnType<typeof operator>;
  pg: PgStats;
  sale: { saleId: string; stock: number; perUserLimit: number };
  /** The probes' sale: its own invariant must hold too. */
  open: string;
  project: LoadResult;
  naive: { units: number; orders: number; stockLeft: number } | null;
};

export async function checkInvariant(input: Input): Promise<Check[]> {
  const { op, pg, sale, project } = input;
  const checks: Check[] = [];
  const check = (name: string, ok: boolean, detail: string) => checks.push({ name, ok, detail });

  const stats = await op.stats(sale.saleId);
  const [db] = await pg.query<{ orders: number; units: number }>(
    "select count(*)::int as orders, coalesce(sum(quantity), 0)::int as units from orders where sale_id = $1",
    [sale.saleId],
  );
  const [over] = await pg.query<{ n: number }>(
    `select count(*)::int as n from (select user_id from orders where sale_id = $1
       and status in ('awaiting_payment', 'paid') group by user_id having sum(quantity) > $2) x`,
    [sale.saleId, sale.perUserLimit],
  );
  const [known] = await pg.query<{ n: number }>(
    "select count(*)::int as n from orders where id = any($1::text[])",
    [project.orderIds],
  );
  const orders = db?.orders ?? 0;
  const units = db?.units ?? 0;

  check(
    "sold units = stock",
    units === sale.stock && stats.remaining === 0,
    `${units} units in Postgres, ${stats.remaining} remaining in Redis, stock ${sale.stock}`,
  );
  check(
    "units the crowd was told = stock",
    project.reservedUnits === sale.stock,
    `${project.reservedUnits} units in distinct 202 answers`,
  );
  check(
    "orders in Postgres = reservations",
    orders === project.reservedOrders && stats.queued === 0,
    `${orders} orders in Postgres, ${project.reservedOrders} distinct order ids answered, ${stats.queued} still queued`,
  );
  check(
    "every answered order is in Postgres",
    (known?.n ?? 0) === project.orderIds.length,
    `${known?.n ?? 0} of ${project.orderIds.length}`,
  );
  check("ledger entries = orders", stats.ledgerEntries === orders, `${stats.ledgerEntries} ledger entries`);
  check("no user over the limit", (over?.n ?? 0) === 0, `${over?.n ?? 0} users above ${sale.perUserLimit}`);
  check("stats.invariantHolds (seed-000 sale)", stats.invariantHolds, JSON.stringify(stats));
  const probe = await op.stats(input.open);
  check(
    "stats.invariantHolds (probe sale)",
    probe.invariantHolds && probe.queued === 0,
    `queued ${probe.queued}, orders ${probe.ordersInDb}, ledger ${probe.ledgerEntries}`,
  );
  if (input.naive) {
    const n = input.naive;
    check(
      "naive baseline sold exactly its stock",
      n.units === sale.stock && n.stockLeft === 0,
      `${n.units} units in ${n.orders} orders, ${n.stockLeft} left`,
    );
  }
  return checks;
}
