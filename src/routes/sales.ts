import { createRoute } from "@hono/zod-openapi";
import { apiRouter, json, type RouteContext } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { cacheHeaders, ifNoneMatchHeaders, notModified, SALE_CACHE_CONTROL } from "../api/http-cache";
import { saleIdParam, saleListSchema, saleSchema } from "../api/sale-schemas";
import { CatalogMissingError } from "../catalog/catalog";
import { saleStatus, toSaleView } from "../catalog/sale-record";
import { hasLostSales, readSaleList } from "../catalog/sale-store";
import { type AppContext, deps } from "../context";
import { ifNoneMatchHits, weakEtag } from "../http/etag";
import { limited } from "../middleware/rate-limit";
import { recoverLostSales } from "../recovery/recover-sales";
import { saleNotFound } from "../responses/sale-refusals";
import type { Deps } from "../services";
import { storeNow } from "../stores/store-clock";

const CACHING =
  "Answered from the sales the server holds in memory (re-read at most twice a second), with an `ETag` of everything but `serverTime` and `Cache-Control` for a CDN or the browser; `If-None-Match` with a current tag is 304 with no body.";

const listSalesRoute = createRoute({
  method: "get",
  path: "/",
  tags: ["Shopper"],
  summary: "Live and upcoming sales",
  description: CACHING,
  middleware: [limited("sale-list")] as const,
  request: { headers: ifNoneMatchHeaders },
  responses: {
    200: {
      ...json("Live and upcoming sales (`productToken` only on live ones).", saleListSchema),
      headers: cacheHeaders,
    },
    304: notModified("The list the `If-None-Match` tag names is still current."),
    ...errorResponses("RATE_LIMITED", "UNAVAILABLE"),
  },
});

const getSaleRoute = createRoute({
  method: "get",
  path: "/{saleId}",
  tags: ["Shopper"],
  summary: "One sale",
  description: CACHING,
  middleware: [limited("sale-read")] as const,
  request: { params: saleIdParam, headers: ifNoneMatchHeaders },
  responses: {
    200: { ...json("The sale as shoppers see it (ended ones included).", saleSchema), headers: cacheHeaders },
    304: notModified("The sale the `If-None-Match` tag names is unchanged (but for `serverTime`)."),
    ...errorResponses("UNKNOWN_SALE", "RATE_LIMITED", "UNAVAILABLE"),
  },
});

/**
 * The process's sale list; with no catalog to vouch for it (a new shop's first read, or the catalog lost
 * with its store), one recovery of the catalog alone (a new shop's empty catalog made, the sales Redis
 * holds registered again; nothing rebuilt, as a sale may be being created) and one more read: 503 if
 * that did not bring it.
 */
async function saleList(d: Deps, now: number) {
  try {
    return await readSaleList(d, now);
  } catch (error) {
    if (!(error instanceof CatalogMissingError)) throw error;
    await recoverLostSales(d, { catalogOnly: true });
    return readSaleList(d, now);
  }
}

/** `GET /api/sales`: live and upcoming sales. */
async function listSales(c: RouteContext<typeof listSalesRoute>) {
  const d = deps(c);
  const now = await storeNow(d, { refreshMs: d.config.STORE_CLOCK_REFRESH_MS });
  const sales = (await saleList(d, now)).filter((s) => saleStatus(s, now) !== "ended");
  // a sale lost with its store stays listed as last read while a recovery rebuilds it
  if (hasLostSales(d.memory)) d.defer(recoverLostSales(d));
  const body = {
    sales: sales.map((s) => toSaleView(s, now, "shopper")),
    serverTime: new Date(now).toISOString(),
  };
  if (await notModifiedSince(c, body)) return c.body(null, 304);
  return c.json(body, 200);
}

/** `GET /api/sales/:saleId`: one sale. */
async function getSale(c: RouteContext<typeof getSaleRoute>) {
  const d = deps(c);
  const now = await storeNow(d, { refreshMs: d.config.STORE_CLOCK_REFRESH_MS });
  const { saleId } = c.req.valid("param");
  const sale = (await saleList(d, now)).find((s) => s.saleId === saleId);
  if (hasLostSales(d.memory)) d.defer(recoverLostSales(d));
  if (!sale) throw saleNotFound(d, saleId);
  const body = toSaleView(sale, now, "shopper");
  if (await notModifiedSince(c, body)) return c.body(null, 304);
  return c.json(body, 200);
}

/**
 * `GET /api/sales` (live and upcoming) and `GET /api/sales/:saleId`, as shoppers see them, from the
 * process's sale list (src/catalog/sale-store.ts), limited per client address. Status and `serverTime`
 * follow the store's clock, the one the reservation script decides the window by, so a page counting
 * down to `startsAt` opens its button when buying actually opens.
 */
export const saleRoutes = apiRouter().openapi(listSalesRoute, listSales).openapi(getSaleRoute, getSale);

/** Sets the body's tag and caching headers; true when the request's `If-None-Match` names that tag. */
async function notModifiedSince(c: AppContext, body: unknown): Promise<boolean> {
  const tag = await weakEtag(body);
  c.header("ETag", tag);
  c.header("Cache-Control", SALE_CACHE_CONTROL);
  return ifNoneMatchHits(c.req.header("If-None-Match"), tag);
}
