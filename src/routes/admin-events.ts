import { Hono } from "hono";
import { type AppEnv, configOf, deps } from "../context";
import { ApiError } from "../errors";
import { adminAuth } from "../middleware/admin-auth";
import { figuresFrame, readFigureFrames, readSaleFigures, statsFeed } from "../realtime/stats-feed";
import { readSale } from "../sale/sale-store";
import { eventStream, holding, slotFor } from "./events";

/** The operator's figures are read at most once a second per isolate, however many pages watch. */
const FIGURES_MAX_AGE_MS = 1_000;

/**
 * `GET /api/admin/sales/:saleId/events` (operator token): `event: stats` with the body of
 * `GET …/stats` and `event: timeline` with the body of `GET …/timeline`, at once and then whenever
 * they change, read through the isolate's one operator feed (realtime/stats-feed.ts). Counted against
 * `REALTIME_MAX_STREAMS` like the shoppers' streams.
 */
export const adminEventRoutes = new Hono<AppEnv>()
  .use("/sales/:saleId/events", adminAuth({ token: (c) => configOf(c).ADMIN_TOKEN }))
  .get("/sales/:saleId/events", async (c) => {
    const d = deps(c);
    const saleId = c.req.param("saleId");
    const feed = statsFeed(FIGURES_MAX_AGE_MS);
    const leases = [slotFor(d), feed.watch(saleId, d.now)];
    const first = await holding(leases, async () => {
      if (!(await readSale(d.redis, saleId))) throw new ApiError("UNKNOWN_SALE", "No such sale.");
      if (!feed.getFresh(saleId, d.now))
        feed.put(saleId, figuresFrame(await readSaleFigures(d, saleId, d.now)), d.now);
      const frame = feed.get(saleId);
      if (!frame) throw new ApiError("UNKNOWN_SALE", "No such sale.");
      return frame;
    });
    return eventStream(c, d, leases, {
      first,
      current: () => feed.get(saleId) ?? null,
      refresh: (now) =>
        feed.due(now) ? feed.refresh(now, (ids) => readFigureFrames(d, ids, Date.now())) : undefined,
    });
  });
