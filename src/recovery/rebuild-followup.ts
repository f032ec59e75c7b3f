import { sql } from "drizzle-orm";
import { withDb } from "../db/client";
import { enqueueOrders } from "../orders/enqueue-order";
import { markRestored } from "../orders/order-repository";
import type { RebuildDeps } from "../services";
import { setSalePaused } from "../stock/pause";
import type { QueuedOrder } from "../stock/queued-order";
import { restoreStock } from "../stock/restore";
import { storeNow } from "../stores/store-clock";

/**
 * What a rebuild does after its script replaced the sale's Redis state:
 * - the queued orders it kept (Redis held them, Postgres had not counted them) are looked up in
 *   Postgres: those still absent are published again (a failure is left to the sweeper, which
 *   republishes stale outbox entries); those that became cancelled or expired meanwhile get their
 *   units back (restore-stock.lua, exactly once);
 * - the pause flag is read again: an operator's pause or resume that reached Postgres after the rebuild
 *   read it (a later `pause_version`), and Redis before the script replaced the meta hash, is applied
 *   again (as of its version: a still later one that reached Redis stays).
 */
export async function settleKeptOrders(
  deps: RebuildDeps,
  saleId: string,
  kept: QueuedOrder[],
  pauseVersionAsRead: number,
): Promise<void> {
  const ids = JSON.stringify(kept.map((o) => o.orderId));
  const [rows, sales] = await withDb(() =>
    Promise.all([
      deps.db.execute<{ id: string; status: string }>(sql`
        select id, status from orders where id in (select jsonb_array_elements_text(${ids}::jsonb))`),
      deps.db.execute<{ paused: boolean; pause_version: number }>(
        sql`select paused, pause_version from sales where id = ${saleId}`,
      ),
    ]),
  );
  const status = new Map(rows.rows.map((r) => [r.id, r.status]));
  const finished = kept.filter(
    (o) => status.get(o.orderId) === "expired" || status.get(o.orderId) === "cancelled",
  );
  for (const order of finished)
    await restoreStock(deps.redis, order, String(status.get(order.orderId)), deps.now);
  await markRestored(
    deps.db,
    finished.map((o) => o.orderId),
  );
  const pause = sales.rows[0];
  if (pause && Number(pause.pause_version) > pauseVersionAsRead)
    await setSalePaused(deps.redis, saleId, pause.paused, {
      version: Number(pause.pause_version),
      now: await storeNow({ ...deps, defer: deps.defer ?? ((p) => void p.catch(() => {})) }),
    });
  const unwritten = kept.filter((o) => !status.has(o.orderId));
  if (unwritten.length > 0) {
    await enqueueOrders(deps, unwritten, { generation: `rebuild-${deps.now}` }).catch((error) =>
      console.warn(`rebuild of sale ${saleId}: ${unwritten.length} kept order(s) left to the sweeper`, error),
    );
  }
}
