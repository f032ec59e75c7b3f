import { sql } from "drizzle-orm";
import { type SaleRecord, toSaleView } from "../catalog/sale-record";
import { readSale } from "../catalog/sale-store";
import { withDb } from "../db/client";
import type { LifecycleDeps, WebhookDeps } from "../services";
import { emitSaleEvent, type SaleEventType } from "./emit";

/** The event a change of a sale's status (as the clock and its stock make it) announces, if any. */
function eventFor(previous: string | null, status: string): SaleEventType | null {
  if (status === "live" && (previous === null || previous === "upcoming" || previous === "sold_out"))
    return "sale.live";
  if (status === "sold_out") return "sale.sold_out";
  if (status === "ended") return "sale.ended";
  return null;
}

/**
 * The sweep's step for the statuses no request changes: a sale opening (`sale.live`, also when stock
 * comes back to a sold-out sale), selling out (`sale.sold_out`) and ending (`sale.ended`). Each sale's
 * status as last announced is kept in Postgres; one statement records the statuses now and answers
 * those that changed, which are announced (to subscribed endpoints only). Runs once a minute, from any
 * process, so an announcement lags the change by at most a minute and is made once whichever process
 * sees it first. Paused and resumed are announced by the operator's routes. Returns how many changed.
 */
export async function announceSaleStatuses(
  deps: WebhookDeps & { now: number },
  sales: SaleRecord[],
): Promise<number> {
  if (sales.length === 0) return 0;
  const views = new Map(sales.map((s) => [s.saleId, toSaleView(s, deps.now, "operator")]));
  const input = JSON.stringify([...views.values()].map((v) => ({ sale_id: v.saleId, status: v.status })));
  const result = await withDb(() =>
    deps.db.execute<{ sale_id: string; status: string; previous: string | null }>(sql`
      with input as (select * from jsonb_to_recordset(${input}::jsonb) as x(sale_id text, status text)),
      old as (select w.sale_id, w.status from webhook_sale_status w join input using (sale_id)),
      up as (
        insert into webhook_sale_status (sale_id, status) select sale_id, status from input order by sale_id
        on conflict (sale_id) do update set status = excluded.status
        where webhook_sale_status.status <> excluded.status
        returning sale_id, status
      )
      select up.sale_id, up.status, old.status as previous from up left join old using (sale_id)`),
  );
  for (const row of result.rows) {
    const type = eventFor(row.previous, row.status);
    const view = views.get(row.sale_id);
    if (type && view) await emitSaleEvent(deps, type, view);
  }
  return result.rows.length;
}

/**
 * {@link announceSaleStatuses} for sales an order write just left with no units (the order-write job), so
 * `sale.sold_out` goes out within moments rather than at the next sweep: one Redis read and one statement
 * per sale, only when a batch takes a sale to zero. Never throws: the sweep announces what this missed.
 */
export async function announceSoldOut(deps: LifecycleDeps, saleIds: string[]): Promise<void> {
  if (saleIds.length === 0) return;
  try {
    const sales = (await Promise.all(saleIds.map((id) => readSale(deps.redis, id)))).filter(
      (s): s is SaleRecord => s !== null,
    );
    await announceSaleStatuses(deps, sales);
  } catch (error) {
    console.warn("webhooks: sold-out announcement left to the sweep:", error);
  }
}

/**
 * {@link announceSaleStatuses} for a sale just created: live at once (`sale.live` now), or upcoming
 * (recorded, so the sweep announces it live when it opens). Never throws: the sweep does it otherwise.
 */
export async function announceNewSale(deps: WebhookDeps & { now: number }, sale: SaleRecord): Promise<void> {
  try {
    await announceSaleStatuses(deps, [sale]);
  } catch (error) {
    console.warn("webhooks: new sale's announcement left to the sweep:", error);
  }
}
