import { createRoute, type z } from "@hono/zod-openapi";
import {
  deadLettersSchema,
  rebuildReportSchema,
  reconcileQuery,
  reconcileReportSchema,
  saleStatsSchema,
  timelineSchema,
} from "../api/admin-report-schemas";
import { apiRouter, json, OPERATOR, type RouteContext } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { saleIdParam } from "../api/sale-schemas";
import { forgetSaleList } from "../catalog/sale-store";
import { type Deps, deps } from "../context";
import { ApiError } from "../http/api-error";
import { auditActor } from "../middleware/admin-auth";
import { listDeadLetters } from "../orders/dead-letters";
import { rebuildSale } from "../recovery/rebuild";
import { reconcileSale } from "../recovery/reconcile-sale";
import { recoverCatalogFirst } from "../recovery/recover-sales";
import { saleStats } from "../recovery/sale-stats";
import { readTimeline } from "../stock/timeline";
import { existingSale } from "./admin";

const DEAD_LETTERS_SHOWN = 100;

/** A route on one sale (`/sales/{saleId}/<action>`) that answers 200 with `schema`. */
const ofSale = <M extends "get" | "post", S extends z.ZodType>(
  method: M,
  action: string,
  text: { summary: string; description: string; ok: string },
  schema: S,
) =>
  createRoute({
    method,
    path: `/sales/{saleId}/${action}`,
    tags: ["Operator"],
    security: OPERATOR,
    summary: text.summary,
    description: text.description,
    request: { params: saleIdParam },
    responses: {
      200: json(text.ok, schema),
      ...(method === "post"
        ? errorResponses("UNAUTHENTICATED", "FORBIDDEN", "UNKNOWN_SALE", "UNAVAILABLE")
        : errorResponses("UNAUTHENTICATED", "UNKNOWN_SALE", "UNAVAILABLE")),
    },
  });

const stats = ofSale(
  "get",
  "stats",
  {
    summary: "A sale's figures and the invariant",
    ok: "The figures.",
    description:
      "Units (`stock`, `remaining`) and orders by status from both stores, each variant's units (`variants`), and whether stock = remaining + units in live orders holds for the sale and for each variant, nobody over the sale's limit or a variant's own cap (`invariantBreaks` says what does not). The same body comes as `event: stats` on the operator stream.",
  },
  saleStatsSchema,
);

const timeline = ofSale(
  "get",
  "timeline",
  {
    summary: "Buy outcomes per second",
    ok: "The outcomes per second.",
    description:
      "How buy attempts ended, per second, over the last five minutes (the operator page's chart). The same body comes as `event: timeline` on the operator stream.",
  },
  timelineSchema,
);

const reconcile = createRoute({
  method: "post",
  path: "/sales/{saleId}/reconcile",
  tags: ["Operator"],
  security: OPERATOR,
  summary: "Check Redis against Postgres and repair",
  description:
    "Compares the Redis ledger with the Postgres orders: a reservation without an order is published again, an adjustment Redis applied and Postgres missed is recorded, mismatches are reported, the stats' counters are recounted once per pass and repaired, and a lasting stock drift of the sale or of one of its variants (or a user over a limit) pauses the sale rather than overwrite either store; `variants` names the variants that drifted. A run checks a bounded chunk from where the last one stopped; `?full=1` checks everything.",
  request: { params: saleIdParam, query: reconcileQuery },
  responses: {
    200: json("What was found and repaired.", reconcileReportSchema),
    ...errorResponses("UNAUTHENTICATED", "FORBIDDEN", "INVALID_REQUEST", "UNKNOWN_SALE", "UNAVAILABLE"),
  },
});

const rebuild = ofSale(
  "post",
  "rebuild",
  {
    summary: "Rebuild a sale's Redis state from Postgres",
    ok: "The rebuilt figures.",
    description:
      "For a Redis that lost the sale, or on request: the sale moves to a new generation, its stock, holdings and ledger are rebuilt from the live orders, and buying waits until `pausedUntil` so order writes still in flight are counted first.",
  },
  rebuildReportSchema,
);

const deadLetters = createRoute({
  method: "get",
  path: "/dead-letters",
  tags: ["Operator"],
  security: OPERATOR,
  summary: "Jobs QStash gave up on",
  description: `The last ${DEAD_LETTERS_SHOWN} job deliveries QStash stopped retrying, newest first.`,
  responses: {
    200: json("The dead letters.", deadLettersSchema),
    ...errorResponses("UNAUTHENTICATED", "UNAVAILABLE"),
  },
});

/** The id of a sale Redis holds (a sale it lost is rebuilt by the recovery, not read here). */
async function existingSaleId(d: Deps, saleId: string): Promise<string> {
  return (await existingSale(d, saleId)).saleId;
}

/** `GET /api/admin/sales/:saleId/stats`: a sale's figures and the invariant. */
async function getSaleStats(c: RouteContext<typeof stats>) {
  const d = deps(c);
  return c.json(await saleStats(d, await existingSaleId(d, c.req.valid("param").saleId)), 200);
}

/** `GET /api/admin/sales/:saleId/timeline`: buy outcomes per second. */
async function getSaleTimeline(c: RouteContext<typeof timeline>) {
  const d = deps(c);
  const saleId = await existingSaleId(d, c.req.valid("param").saleId);
  return c.json(await readTimeline(d.redis, saleId, d.now), 200);
}

/** `POST /api/admin/sales/:saleId/reconcile`: check Redis against Postgres and repair. */
async function runReconciliation(c: RouteContext<typeof reconcile>) {
  const d = deps(c);
  const saleId = await existingSaleId(d, c.req.valid("param").saleId);
  const full = c.req.valid("query").full === "1";
  const report = await reconcileSale(d, saleId, d.config.OUTBOX_GRACE_SECONDS * 1000, {
    full,
    actor: auditActor(c),
  });
  if (report.paused) forgetSaleList(d.memory);
  return c.json(report, 200);
}

/** `POST /api/admin/sales/:saleId/rebuild`: rebuild a sale's Redis state from Postgres. */
async function runRebuild(c: RouteContext<typeof rebuild>) {
  const d = deps(c);
  await recoverCatalogFirst(d);
  const report = await rebuildSale(d, c.req.valid("param").saleId, d.config.RECOVERY_QUIET_SECONDS);
  if (!report) throw new ApiError("UNKNOWN_SALE", "No such sale.");
  forgetSaleList(d.memory);
  return c.json(report, 200);
}

/** `GET /api/admin/dead-letters`: jobs QStash gave up on. */
async function getDeadLetters(c: RouteContext<typeof deadLetters>) {
  return c.json({ deadLetters: await listDeadLetters(deps(c).db, DEAD_LETTERS_SHOWN) }, 200);
}

/**
 * What the operator reads and repairs: a sale's figures and chart, the reconciliation, the rebuild
 * from Postgres, the dead letters. Mounted at `/api/admin`, behind the operator token (see app.ts).
 */
export const adminReportRoutes = apiRouter()
  .openapi(stats, getSaleStats)
  .openapi(timeline, getSaleTimeline)
  .openapi(reconcile, runReconciliation)
  .openapi(rebuild, runRebuild)
  .openapi(deadLetters, getDeadLetters);
