import { type SaleView, saleStatus, toSaleView } from "../sale/sale-record";
import { readAllSales } from "../sale/sale-store";
import type { RedisStore as Redis } from "../stores/redis-store";
import { type Frame, frameOf, keepSame } from "./frame";
import { createSharedSnapshot, type SharedSnapshot } from "./shared-snapshot";

/** The one key of the list feed: every watcher of the list watches the same value. */
export const SALE_LIST_KEY = "sales";

/**
 * The shop's list of live and upcoming sales, watched in this isolate or process through one feed: one
 * read of every sale (one SMEMBERS and one pipeline) at most once per `maxAgeMs`, whatever the number of
 * watchers. It holds the finished `sales` event (frame.ts), the body of `GET /api/sales`, rendered once
 * per read and kept, with its version, while nothing but the clock changed.
 */
export type SaleListFeed = SharedSnapshot<Frame>;

const feeds = new Map<number, SaleListFeed>();

/** The isolate's sale-list feed for a refresh interval (one per isolate in practice). */
export function saleListFeed(maxAgeMs: number): SaleListFeed {
  let feed = feeds.get(maxAgeMs);
  if (!feed) {
    feed = createSharedSnapshot<Frame>({ maxAgeMs, merge: keepSame });
    feeds.set(maxAgeMs, feed);
  }
  return feed;
}

/** What makes two list events the same: everything but the clock readings. */
function listKey(views: SaleView[]): string {
  return JSON.stringify(views.map((v) => ({ ...v, serverTime: "" })));
}

/** The list as `GET /api/sales` answers it (live and upcoming sales, shopper view) at the store's `now`. */
export async function readSaleListFrame(redis: Redis, now: () => Promise<number>): Promise<Frame> {
  const sales = await readAllSales(redis);
  const at = await now();
  const views = sales.filter((s) => saleStatus(s, at) !== "ended").map((s) => toSaleView(s, at, "shopper"));
  const data = JSON.stringify({ sales: views, serverTime: new Date(at).toISOString() });
  return frameOf([{ event: "sales", data, key: listKey(views) }]);
}
