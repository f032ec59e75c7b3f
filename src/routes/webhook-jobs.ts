import { createRoute } from "@hono/zod-openapi";
import { apiRouter, json, QSTASH, type RouteContext } from "../api/api-router";
import { errorResponses } from "../api/error-responses";
import { deliveryJobSchema, deliveryResultSchema } from "../api/webhook-schemas";
import { configOf, deps } from "../context";
import { ApiError } from "../http/api-error";
import { JOB_ROUTES } from "../job-paths";
import { qstashSignature } from "../middleware/qstash-signature";
import { deliverJob } from "../webhooks/deliver";

/** 50 messages of an Order or a Sale each (well under 2 KiB): a larger body is 413 before it is read. */
const MAX_DELIVERY_BODY_BYTES = 256 * 1024;

const delivery = createRoute({
  method: "post",
  path: JOB_ROUTES.webhookDelivery,
  tags: ["Jobs"],
  summary: "Deliver webhook messages to one endpoint",
  description:
    "POSTs each message to the endpoint, in order, signed with its current secrets (Standard Webhooks). Answers 502 DELIVERY_FAILED at the first answer that is not 2xx (or no answer within 10 s), without Retry-After, so QStash delivers the job again with its backoff; every message is then sent again (receivers drop a `webhook-id` they have seen). A removed endpoint: 200, nothing sent. Retries exhausted: the failure callback records a dead letter the operator can replay.",
  security: QSTASH,
  middleware: [
    qstashSignature({
      maxBodyBytes: MAX_DELIVERY_BODY_BYTES,
      keys: (c) => {
        const config = configOf(c);
        return { current: config.QSTASH_CURRENT_SIGNING_KEY, next: config.QSTASH_NEXT_SIGNING_KEY };
      },
      publicUrl: (c) => configOf(c).PUBLIC_URL,
    }),
  ] as const,
  request: { body: { required: true, content: { "application/json": { schema: deliveryJobSchema } } } },
  responses: {
    200: json("What was delivered.", deliveryResultSchema),
    ...errorResponses(
      "INVALID_REQUEST",
      "UNAUTHENTICATED",
      "PAYLOAD_TOO_LARGE",
      "DELIVERY_FAILED",
      "UNAVAILABLE",
    ),
  },
});

/** The webhook delivery job QStash calls (mounted at `/api/jobs`, next to the order pipeline's). */
async function webhookDeliveryJob(c: RouteContext<typeof delivery>) {
  const d = deps(c);
  const outcome = await deliverJob(d, c.req.valid("json"));
  d.metrics?.webhookDelivery(outcome.kind === "stopped" ? "failed" : outcome.kind);
  switch (outcome.kind) {
    case "gone":
      return c.json({ delivered: 0, dropped: true }, 200);
    case "delivered":
      return c.json({ delivered: outcome.delivered, dropped: false }, 200);
    case "failed":
      throw new ApiError(
        "DELIVERY_FAILED",
        `The endpoint answered ${outcome.status ?? "nothing"} to ${outcome.msgId} (${outcome.delivered} delivered before it).`,
      );
    case "stopped": // only with limits, which a job does not set
      throw new ApiError("DELIVERY_FAILED", `Stopped after ${outcome.delivered} message(s).`);
  }
}

export const webhookJobRoutes = apiRouter().openapi(delivery, webhookDeliveryJob);
