import { Hono } from "hono";
import { type AppEnv, configOf, deps } from "../context";
import { ApiError } from "../errors";
import { adminAuth } from "../middleware/admin-auth";
import { figureFrames, readFigures, readSaleFigures, statsFeed } from "../realtime/stats-feed";
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
      let figures = feed.getFresh(saleId, d.now);
      if (!figures) {
        figures = await readSaleFigures(d, saleId, d.now);
        feed.put(saleId, figures, d.now);
      }
      return figures;
    });
    return eventStream(c, d, leases, {
      event: "stats",
      first,
      async read() {
        await feed.refresh(Date.now(), (ids) => readFigures(d, ids, Date.now()));
        return feed.get(saleId) ?? null;
      },
      data: (f) => JSON.stringify(f.stats),
      frames: figureFrames,
      key: (f) =>
        figureFrames(f)
          .map((x) => x.key)
          .join("\n"),
    });
  });
