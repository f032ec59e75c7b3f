import { type SaleView, saleStatus, toSaleView } from "../catalog/sale-record";
import { readSaleList } from "../catalog/sale-store";
import { type Frame, frameOf } from "../memory/frame";
import type { Memory } from "../memory/memory";
import type { RedisStore as Redis } from "../stores/redis-store";

/** The one key of the list feed: every watcher of the list watches the same value. */
export const SALE_LIST_KEY = "sales";

/** What makes two list events the same: everything but the clock readings. */
function listKey(views: SaleView[]): string {
  return JSON.stringify(views.map((v) => ({ ...v, serverTime: "" })));
}

/**
 * The list as `GET /api/sales` answers it (live and upcoming sales, shopper view) at the store's `now`,
 * from the process's sale list (one read of it every half second for the route and the feed; a sale lost
 * with its store stays in it as last read while it is rebuilt).
 */
export async function readSaleListFrame(
  d: { redis: Redis; memory: Pick<Memory, "saleList"> },
  now: () => Promise<number>,
): Promise<Frame> {
  const at = await now();
  const sales = await readSaleList(d, at);
  const views = sales.filter((s) => saleStatus(s, at) !== "ended").map((s) => toSaleView(s, at, "shopper"));
  const data = JSON.stringify({ sales: views, serverTime: new Date(at).toISOString() });
  return frameOf([{ event: "sales", data, key: listKey(views) }]);
}
