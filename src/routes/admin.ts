import { Hono } from "hono";
import { type AppContext, type AppEnv, configOf, deps } from "../context";
import { ApiError, StoreUnavailableError } from "../errors";
import { parseJsonObject, readBoundedBody } from "../http/read-body";
import { newSaleId } from "../ids";
import { adminAuth } from "../middleware/admin-auth";
import { listDeadLetters } from "../orders/dead-letters";
import { reconcileSale } from "../orders/reconcile-sale";
import { saleStats } from "../orders/sale-stats";
import { parseIdempotencyKey } from "../sale/buy-request";
import { registerProductToken } from "../sale/catalog";
import { productToken } from "../sale/product-token";
import { rebuildSale } from "../sale/rebuild-sale";
import { recoverLostSales } from "../sale/recover-sales";
import { parseSaleDefinition, parseStockDelta } from "../sale/sale-definition";
import { toSaleView } from "../sale/sale-record";
import { findSaleByToken, insertSale, setSalePausedInDb } from "../sale/sale-repository";
import { preheatSale, readAllSales, readSale, setSalePaused } from "../sale/sale-store";
import { applyStockAdjustment } from "../sale/stock-adjustment";
import { readTimeline } from "../sale/timeline";
import { forgetSaleList } from "./sales";

const MAX_ADMIN_BODY_BYTES = 16 * 1024;

async function jsonBody(c: AppContext): Promise<Record<string, unknown>> {
  return parseJsonObject(await readBoundedBody(c.req.raw, MAX_ADMIN_BODY_BYTES));
}

async function existingSale(c: AppContext) {
  const { redis } = deps(c);
  const sale = await readSale(redis, c.req.param("saleId") ?? "");
  if (!sale) throw new ApiError("UNKNOWN_SALE", "No such sale.");
  return sale;
}

async function pauseRoute(c: AppContext, paused: boolean) {
  const d = deps(c);
  const sale = await existingSale(c);
  await setSalePausedInDb(d.db, sale.saleId, paused);
  await setSalePaused(d.redis, sale.saleId, paused);
  forgetSaleList();
  return c.json(toSaleView({ ...sale, paused }, d.now, "operator"));
}

/** Operator routes, all behind `Authorization: Bearer <ADMIN_TOKEN>`. */
export const adminRoutes = new Hono<AppEnv>()
  .use(adminAuth({ token: (c) => configOf(c).ADMIN_TOKEN }))
  .get("/sales", async (c) => {
    const { redis, now } = deps(c);
    const sales = await readAllSales(redis);
    return c.json({
      sales: sales.map((s) => toSaleView(s, now, "operator")),
      serverTime: new Date(now).toISOString(),
    });
  })
  .post("/sales", async (c) => {
    const d = deps(c);
    const def = parseSaleDefinition(await jsonBody(c));
    const token = await productToken(d.config.PRODUCT_TOKEN_SECRET, def.productId);
    const record = {
      saleId: newSaleId(),
      productId: def.productId,
      name: def.name,
      priceCents: def.priceCents,
      perUserLimit: def.perUserLimit,
      startsAt: def.startsAt,
      endsAt: def.endsAt,
      paused: false,
      paymentWindowMs: def.paymentWindowSeconds * 1000,
      stock: def.stock,
      initialStock: def.stock,
      productToken: token,
    };
    if (!(await insertSale(d.db, record))) {
      const existing = await findSaleByToken(d.db, token);
      await recoverLostSales(d);
      throw new ApiError("CONFLICT", "This product already has a sale; use another productId.", {
        details: { saleId: existing?.id ?? null },
      });
    }
    await preheatSale(d.redis, record);
    await registerProductToken(d.redis, record.saleId, token);
    forgetSaleList();
    return c.json(toSaleView({ ...record, remaining: record.stock }, d.now, "operator"), 201);
  })
  .get("/sales/:saleId", async (c) => c.json(toSaleView(await existingSale(c), deps(c).now, "operator")))
  .get("/sales/:saleId/stats", async (c) => {
    const sale = await existingSale(c);
    return c.json(await saleStats(deps(c), sale.saleId));
  })
  .get("/sales/:saleId/timeline", async (c) => {
    const sale = await existingSale(c);
    const d = deps(c);
    return c.json(await readTimeline(d.redis, sale.saleId, d.now));
  })
  .post("/sales/:saleId/reconcile", async (c) => {
    const sale = await existingSale(c);
    const d = deps(c);
    const report = await reconcileSale(d, sale.saleId, d.config.OUTBOX_GRACE_SECONDS * 1000);
    if (report.paused) forgetSaleList();
    return c.json(report);
  })
  .post("/sales/:saleId/rebuild", async (c) => {
    const d = deps(c);
    const report = await rebuildSale(d, c.req.param("saleId"), d.config.RECOVERY_QUIET_SECONDS);
    if (!report) throw new ApiError("UNKNOWN_SALE", "No such sale.");
    forgetSaleList();
    return c.json(report);
  })
  .post("/sales/:saleId/pause", (c) => pauseRoute(c, true))
  .post("/sales/:saleId/resume", (c) => pauseRoute(c, false))
  .post("/sales/:saleId/stock", async (c) => {
    const d = deps(c);
    const delta = parseStockDelta(await jsonBody(c));
    const idempotencyKey = parseIdempotencyKey(c.req.header("Idempotency-Key"));
    const sale = await existingSale(c);
    const outcome = await applyStockAdjustment(d, sale, { delta, idempotencyKey }).catch((error) => {
      if (idempotencyKey !== null || !(error instanceof StoreUnavailableError)) throw error;
      throw new ApiError(
        "UNAVAILABLE",
        "A store is temporarily unavailable; the adjustment may have been applied (the reconciliation then records it). Send it with an Idempotency-Key to retry it safely.",
        { retryAfterSeconds: 2 },
      );
    });
    if (outcome.kind === "below_reserved") {
      throw new ApiError(
        "CONFLICT",
        `Stock cannot go below what is reserved: at most ${outcome.remaining} can be removed.`,
        {
          details: { remaining: outcome.remaining },
        },
      );
    }
    if (outcome.kind === "key_reused") {
      throw new ApiError(
        "CONFLICT",
        `This Idempotency-Key was already used for an adjustment of ${outcome.appliedDelta}; use a new key.`,
        { details: { appliedDelta: outcome.appliedDelta } },
      );
    }
    if (outcome.kind === "not_initialised" || outcome.kind === "rebuilding")
      throw new ApiError("UNAVAILABLE", "The sale is being restored.", { retryAfterSeconds: 2 });
    forgetSaleList();
    return c.json(
      toSaleView({ ...sale, remaining: outcome.remaining, stock: outcome.stock }, d.now, "operator"),
    );
  })
  .get("/dead-letters", async (c) => c.json({ deadLetters: await listDeadLetters(deps(c).db, 100) }));
