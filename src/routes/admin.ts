import { createRoute } from "@hono/zod-openapi";
import {
  MAX_ADMIN_BODY_BYTES,
  operatorSaleListSchema,
  operatorSaleSchema,
  saleDefinitionSchema,
} from "../api/admin-schemas";
import { apiRouter, json, OPERATOR, type RouteContext } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { saleIdParam } from "../api/sale-schemas";
import { type OperatorSaleView, type SaleRecord, toSaleView } from "../catalog/sale-record";
import { setSalePausedInDb } from "../catalog/sale-repository";
import { forgetSaleList, readAllSales, readSale } from "../catalog/sale-store";
import { type Deps, deps } from "../context";
import type { AuditActor } from "../db/audit-log";
import { ApiError } from "../http/api-error";
import { auditActor } from "../middleware/admin-auth";
import { jsonBody } from "../middleware/json-body";
import { writeRoomJournal } from "../room/room-record";
import { type CreateSaleOutcome, createSale } from "../sales/create-sale";
import { setSalePaused } from "../stock/pause";
import { storeNow } from "../stores/store-clock";
import { announceSaleChange } from "../webhooks/sale-status";

const operatorRoute = { tags: ["Operator"], security: OPERATOR };
const sale = (description: string) => json(description, operatorSaleSchema);

const listSales = createRoute({
  ...operatorRoute,
  method: "get",
  path: "/sales",
  summary: "Every sale",
  description: "All sales in Redis (ended ones included), with their product tokens.",
  responses: {
    200: json("The sales.", operatorSaleListSchema),
    ...errorResponses("UNAUTHENTICATED", "UNAVAILABLE"),
  },
});

export const createSaleRoute = createRoute({
  ...operatorRoute,
  method: "post",
  path: "/sales",
  summary: "Create a sale",
  description:
    "Writes the sale to Postgres, then preheats Redis and the product-token catalog. A product has one sale (409 CONFLICT names it in `saleId`). A 400 names each bad field in `fields`. The body (at most 16 KiB) is read as JSON whatever its Content-Type.",
  middleware: [jsonBody({ maxBytes: MAX_ADMIN_BODY_BYTES })] as const,
  request: { body: { required: true, content: { "application/json": { schema: saleDefinitionSchema } } } },
  responses: {
    201: sale("The new sale, with the product token shoppers buy with."),
    ...errorResponses("INVALID_REQUEST", "UNAUTHENTICATED", "FORBIDDEN", "CONFLICT", "UNAVAILABLE"),
  },
});

const getSale = createRoute({
  ...operatorRoute,
  method: "get",
  path: "/sales/{saleId}",
  summary: "One sale",
  request: { params: saleIdParam },
  responses: { 200: sale("The sale."), ...errorResponses("UNAUTHENTICATED", "UNKNOWN_SALE", "UNAVAILABLE") },
});

const pauseRoute = (action: "pause" | "resume") =>
  createRoute({
    ...operatorRoute,
    method: "post",
    path: `/sales/{saleId}/${action}`,
    summary: action === "pause" ? "Pause a sale" : "Resume a paused sale",
    description:
      action === "pause"
        ? "Buying is refused with 409 SALE_PAUSED until the sale is resumed; orders already made go on."
        : "Buying opens again (within the sale's window).",
    request: { params: saleIdParam },
    responses: {
      200: sale(action === "pause" ? "The sale, paused." : "The sale, resumed."),
      ...errorResponses("UNAUTHENTICATED", "FORBIDDEN", "UNKNOWN_SALE", "UNAVAILABLE"),
    },
  });

const pauseSaleRoute = pauseRoute("pause");
const resumeSaleRoute = pauseRoute("resume");

type Refusal = { kind: "unknown_sale" } | Extract<CreateSaleOutcome, { kind: "product_taken" }>;

/** The one table from a refused request on the operator's sales to the contract's error. */
function refusal(r: Refusal): ApiError {
  switch (r.kind) {
    case "unknown_sale":
      return new ApiError("UNKNOWN_SALE", "No such sale.");
    case "product_taken":
      return new ApiError("CONFLICT", "This product already has a sale; use another productId.", {
        details: { saleId: r.saleId },
      });
  }
}

/** The sale Redis holds, or 404 UNKNOWN_SALE (for every operator route on one sale). */
export async function existingSale(d: Deps, saleId: string): Promise<SaleRecord> {
  const found = await readSale(d.redis, saleId);
  if (!found) throw refusal({ kind: "unknown_sale" });
  return found;
}

async function setPaused(
  d: Deps,
  saleId: string,
  paused: boolean,
  actor: AuditActor,
): Promise<OperatorSaleView> {
  const found = await existingSale(d, saleId);
  const version = await setSalePausedInDb(d.db, found.saleId, paused, {
    ...actor,
    action: paused ? "sale.pause" : "sale.resume",
    saleId: found.saleId,
    before: { paused: found.paused },
    after: { paused },
  });
  const now = await storeNow(d, { refreshMs: d.config.STORE_CLOCK_REFRESH_MS });
  await setSalePaused(d.redis, found.saleId, paused, { version, now });
  // a waiting room's pause start (or the ends its resume moved) into its record now, if Postgres takes
  // it; else the next step writes it (src/room/room-record.ts)
  if ((found.admission ?? "open") !== "open") await writeRoomJournal(d, found.saleId).catch(() => 0);
  forgetSaleList(d.memory);
  await announceSaleChange(d, found.saleId);
  return toSaleView({ ...found, paused }, d.now, "operator");
}

/** `GET /api/admin/sales`: every sale. */
async function listOperatorSales(c: RouteContext<typeof listSales>) {
  const { redis, now } = deps(c);
  const sales = (await readAllSales(redis)).map((s) => toSaleView(s, now, "operator"));
  return c.json({ sales, serverTime: new Date(now).toISOString() }, 200);
}

/** `POST /api/admin/sales`: create a sale. */
async function createOperatorSale(c: RouteContext<typeof createSaleRoute>) {
  const d = deps(c);
  const outcome = await createSale(d, c.req.valid("json"), auditActor(c));
  if (outcome.kind !== "created") throw refusal(outcome);
  forgetSaleList(d.memory);
  await announceSaleChange(d, outcome.sale.saleId);
  return c.json(toSaleView(outcome.sale, d.now, "operator"), 201);
}

/** `GET /api/admin/sales/:saleId`: one sale. */
async function getOperatorSale(c: RouteContext<typeof getSale>) {
  const d = deps(c);
  return c.json(toSaleView(await existingSale(d, c.req.valid("param").saleId), d.now, "operator"), 200);
}

/** `POST /api/admin/sales/:saleId/pause`: pause a sale (buying is refused until it is resumed). */
async function pauseSale(c: RouteContext<typeof pauseSaleRoute>) {
  return c.json(await setPaused(deps(c), c.req.valid("param").saleId, true, auditActor(c)), 200);
}

/** `POST /api/admin/sales/:saleId/resume`: resume a paused sale. */
async function resumeSale(c: RouteContext<typeof resumeSaleRoute>) {
  return c.json(await setPaused(deps(c), c.req.valid("param").saleId, false, auditActor(c)), 200);
}

/**
 * The operator's sales: list, create, read, pause and resume (stock: admin-stock.ts). Mounted at
 * `/api/admin`, behind the operator token (checked by the app for all of `/api/admin/*`, before any
 * body is read). Operator responses always carry the product token.
 */
export const adminRoutes = apiRouter()
  .openapi(listSales, listOperatorSales)
  .openapi(createSaleRoute, createOperatorSale)
  .openapi(getSale, getOperatorSale)
  .openapi(pauseSaleRoute, pauseSale)
  .openapi(resumeSaleRoute, resumeSale);
