import { createRoute } from "@hono/zod-openapi";
import { apiRouter, json } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { saleIdParam, saleListSchema, saleSchema } from "../api/sale-schemas";
import { saleStatus, toSaleView } from "../catalog/sale-record";
import { readSaleList } from "../catalog/sale-store";
import { deps } from "../context";
import { ApiError } from "../errors";
import { storeNow } from "../stores/store-clock";

const listSales = createRoute({
  method: "get",
  path: "/",
  tags: ["Shopper"],
  summary: "Live and upcoming sales",
  responses: {
    200: json("Live and upcoming sales (`productToken` only on live ones).", saleListSchema),
    ...errorResponses("UNAVAILABLE"),
  },
});

const getSale = createRoute({
  method: "get",
  path: "/{saleId}",
  tags: ["Shopper"],
  summary: "One sale",
  request: { params: saleIdParam },
  responses: {
    200: json("The sale as shoppers see it (ended ones included).", saleSchema),
    ...errorResponses("UNKNOWN_SALE", "UNAVAILABLE"),
  },
});

/**
 * `GET /api/sales` (live and upcoming) and `GET /api/sales/:saleId`, as shoppers see them. Status and
 * `serverTime` follow the store's clock, the one the reservation script decides the window by, so a
 * page counting down to `startsAt` opens its button when buying actually opens.
 */
export const saleRoutes = apiRouter()
  .openapi(listSales, async (c) => {
    const d = deps(c);
    const now = await storeNow(d, { refreshMs: d.config.STORE_CLOCK_REFRESH_MS });
    const sales = (await readSaleList(d, now)).filter((s) => saleStatus(s, now) !== "ended");
    return c.json(
      { sales: sales.map((s) => toSaleView(s, now, "shopper")), serverTime: new Date(now).toISOString() },
      200,
    );
  })
  .openapi(getSale, async (c) => {
    const d = deps(c);
    const now = await storeNow(d, { refreshMs: d.config.STORE_CLOCK_REFRESH_MS });
    const { saleId } = c.req.valid("param");
    const sale = (await readSaleList(d, now)).find((s) => s.saleId === saleId);
    if (!sale) throw new ApiError("UNKNOWN_SALE", "No such sale.");
    c.header("Cache-Control", "no-store");
    return c.json(toSaleView(sale, now, "shopper"), 200);
  });
