import { createRoute } from "@hono/zod-openapi";
import { MAX_ADMIN_BODY_BYTES } from "../api/admin-schemas";
import { apiRouter, json, OPERATOR, type RouteContext } from "../api/api-router";
import { publicEndpoint } from "../api/endpoint-target";
import { errorResponses } from "../api/error-responses";
import {
  createdEndpointSchema,
  deadLetterIdParam,
  endpointDefinitionSchema,
  endpointIdParam,
  endpointListSchema,
  replayedSchema,
  rotatedSecretSchema,
  testSentSchema,
} from "../api/webhook-schemas";
import { deps } from "../context";
import { ApiError } from "../http/api-error";
import { auditActor } from "../middleware/admin-auth";
import { jsonBody } from "../middleware/json-body";
import { replayDeadLetter } from "../orders/dead-letter-replay";
import {
  createEndpoint,
  deleteEndpoint,
  listEndpoints,
  MAX_RETIRED_SECRETS,
  rotateSecret,
} from "../webhooks/endpoint-store";
import { sendTestEvent } from "../webhooks/test-event";

const operatorRoute = { tags: ["Operator"], security: OPERATOR };
const byId = { params: endpointIdParam };
const unknownEndpoint = () => new ApiError("NOT_FOUND", "No such webhook endpoint.");

const createRoute_ = createRoute({
  ...operatorRoute,
  method: "post",
  path: "/webhooks",
  summary: "Register a webhook endpoint",
  description:
    "Deliveries of the named event types (see the document's `webhooks`) will be POSTed to `url`, signed as Standard Webhooks asks with the secret answered here, and only here. A 400 names each bad field and stores nothing; a `url` whose host is not a public address (loopback, private, link-local, `localhost`, in any spelling) is one, unless the engine allows private targets.",
  middleware: [jsonBody({ maxBytes: MAX_ADMIN_BODY_BYTES })] as const,
  request: {
    body: { required: true, content: { "application/json": { schema: endpointDefinitionSchema } } },
  },
  responses: {
    201: json("The endpoint, with its signing secret (shown this once).", createdEndpointSchema),
    ...errorResponses("INVALID_REQUEST", "UNAUTHENTICATED", "FORBIDDEN", "UNAVAILABLE"),
  },
});

const listRoute = createRoute({
  ...operatorRoute,
  method: "get",
  path: "/webhooks",
  summary: "Every webhook endpoint",
  description: "The endpoints, newest first, without their secrets.",
  responses: {
    200: json("The endpoints.", endpointListSchema),
    ...errorResponses("UNAUTHENTICATED", "UNAVAILABLE"),
  },
});

const deleteRoute = createRoute({
  ...operatorRoute,
  method: "delete",
  path: "/webhooks/{endpointId}",
  summary: "Remove a webhook endpoint",
  description: "Nothing more is delivered to it (deliveries already queued are dropped when they run).",
  request: byId,
  responses: {
    204: { description: "Removed." },
    ...errorResponses("UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", "UNAVAILABLE"),
  },
});

const testRoute = createRoute({
  ...operatorRoute,
  method: "post",
  path: "/webhooks/{endpointId}/test",
  summary: "Send a test event",
  description: "Queues one `webhook.test` delivery to the endpoint, signed and retried like any other.",
  request: byId,
  responses: {
    202: json("Queued.", testSentSchema),
    ...errorResponses("UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", "UNAVAILABLE"),
  },
});

const rotateRoute = createRoute({
  ...operatorRoute,
  method: "post",
  path: "/webhooks/{endpointId}/rotate",
  summary: "Rotate an endpoint's secret",
  description: `Answers a new secret. Every secret rotated out keeps signing for 24 hours from its rotation, however many rotations follow: meanwhile \`webhook-signature\` carries one signature per valid secret, the new one first (\`v1,<new> v1,<previous> …\`), so a receiver holding any of them verifies every delivery and can switch without losing one. At most ${MAX_RETIRED_SECRETS} rotated-out secrets sign at once: a rotation while ${MAX_RETIRED_SECRETS} are within their 24 hours is refused with 409 CONFLICT (nothing changes; \`Retry-After\` says when the oldest lapses), rather than taking a secret back from a receiver before its 24 hours.`,
  request: byId,
  responses: {
    200: json("The new secret (shown this once).", rotatedSecretSchema),
    ...errorResponses("UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", "CONFLICT", "UNAVAILABLE"),
  },
});

const replayRoute = createRoute({
  ...operatorRoute,
  method: "post",
  path: "/dead-letters/{id}/replay",
  summary: "Replay a dead letter",
  description:
    "Hands the job QStash gave up on (a webhook delivery, an order write, …) to QStash again, retried as at first, and removes it from the dead letters (if it fails again it is recorded again).",
  request: { params: deadLetterIdParam },
  responses: {
    200: json("Queued again.", replayedSchema),
    ...errorResponses("INVALID_REQUEST", "UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", "UNAVAILABLE"),
  },
});

/** `POST /api/admin/webhooks`: register a webhook endpoint. */
async function registerWebhookEndpoint(c: RouteContext<typeof createRoute_>) {
  return c.json(
    await createEndpoint(deps(c).db, publicEndpoint(deps(c).config, c.req.valid("json")), auditActor(c)),
    201,
  );
}

/** `GET /api/admin/webhooks`: every webhook endpoint. */
async function listWebhookEndpoints(c: RouteContext<typeof listRoute>) {
  return c.json({ endpoints: await listEndpoints(deps(c).db) }, 200);
}

/** `DELETE /api/admin/webhooks/:endpointId`: remove a webhook endpoint. */
async function removeWebhookEndpoint(c: RouteContext<typeof deleteRoute>) {
  if (!(await deleteEndpoint(deps(c).db, c.req.valid("param").endpointId, auditActor(c))))
    throw unknownEndpoint();
  return c.body(null, 204);
}

/** `POST /api/admin/webhooks/:endpointId/test`: send a test event. */
async function testWebhookEndpoint(c: RouteContext<typeof testRoute>) {
  const msgId = await sendTestEvent(deps(c), c.req.valid("param").endpointId);
  if (!msgId) throw unknownEndpoint();
  return c.json({ msgId }, 202);
}

/** `POST /api/admin/webhooks/:endpointId/rotate`: rotate an endpoint's secret. */
async function rotateWebhookSecret(c: RouteContext<typeof rotateRoute>) {
  const outcome = await rotateSecret(deps(c).db, c.req.valid("param").endpointId, auditActor(c));
  switch (outcome.kind) {
    case "rotated":
      return c.json({ secret: outcome.secret }, 200);
    case "unknown_endpoint":
      throw unknownEndpoint();
    case "too_many_retired":
      throw new ApiError(
        "CONFLICT",
        `${MAX_RETIRED_SECRETS} rotated-out secrets of this endpoint still sign for their 24 hours; the oldest lapses at ${outcome.nextAt}. Rotate again then.`,
        { retryAfterSeconds: outcome.retryAfterSeconds },
      );
  }
}

/** `POST /api/admin/dead-letters/:id/replay`: replay a dead letter. */
async function replayDeadLetterJob(c: RouteContext<typeof replayRoute>) {
  const outcome = await replayDeadLetter(deps(c), c.req.valid("param").id, auditActor(c));
  if (outcome === "unknown") throw new ApiError("NOT_FOUND", "No such dead letter.");
  if (outcome === "not_replayable")
    throw new ApiError("INVALID_REQUEST", "This dead letter is not a job of this engine with a JSON body.");
  return c.json({ replayed: true as const }, 200);
}

/**
 * The operator's webhook endpoints (register, list, remove, test, rotate) and the dead letters' replay.
 * Mounted at `/api/admin`, behind the operator token (checked by the app).
 */
export const adminWebhookRoutes = apiRouter()
  .openapi(createRoute_, registerWebhookEndpoint)
  .openapi(listRoute, listWebhookEndpoints)
  .openapi(deleteRoute, removeWebhookEndpoint)
  .openapi(testRoute, testWebhookEndpoint)
  .openapi(rotateRoute, rotateWebhookSecret)
  .openapi(replayRoute, replayDeadLetterJob);
