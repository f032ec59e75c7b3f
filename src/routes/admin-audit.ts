import { createRoute } from "@hono/zod-openapi";
import { apiRouter, json, OPERATOR, type RouteContext } from "../api/api-router";
import { auditChainSchema, auditLogSchema, auditQuery } from "../api/audit-schemas";
import { errorResponses } from "../api/error-responses";
import { deps } from "../context";
import { readAudit, verifyAuditChain } from "../db/audit-log";

const operatorRoute = { tags: ["Operator"], security: OPERATOR };

const auditRoute = createRoute({
  ...operatorRoute,
  method: "get",
  path: "/audit",
  summary: "Who changed what",
  description:
    "Every operator change (create, stock, pause, resume, reconcile, manual payment, webhook endpoints and rotations, dead-letter replays), newest first, written with the change and never updated or deleted. Page with `before` (the last id answered).",
  request: { query: auditQuery },
  responses: {
    200: json("The entries, newest first.", auditLogSchema),
    ...errorResponses("INVALID_REQUEST", "UNAUTHENTICATED", "UNAVAILABLE"),
  },
});

const verifyRoute = createRoute({
  ...operatorRoute,
  method: "get",
  path: "/audit/verify",
  summary: "Check the audit log's hash chain",
  description: "Walks every entry in order; names the first whose link or hash does not match its content.",
  responses: {
    200: json("What the walk found.", auditChainSchema),
    ...errorResponses("UNAUTHENTICATED", "UNAVAILABLE"),
  },
});

/** `GET /api/admin/audit`: the audit log, newest first. */
async function getAuditLog(c: RouteContext<typeof auditRoute>) {
  const { saleId, limit, before } = c.req.valid("query");
  const query = { limit, ...(saleId !== undefined && { saleId }), ...(before !== undefined && { before }) };
  return c.json({ entries: await readAudit(deps(c).db, query) }, 200);
}

/** `GET /api/admin/audit/verify`: the audit log's hash chain checked. */
async function verifyAuditLog(c: RouteContext<typeof verifyRoute>) {
  return c.json(await verifyAuditChain(deps(c).db), 200);
}

/** The operators' audit log, read-only (entries are written by each change). Mounted at `/api/admin`. */
export const adminAuditRoutes = apiRouter()
  .openapi(auditRoute, getAuditLog)
  .openapi(verifyRoute, verifyAuditLog);
