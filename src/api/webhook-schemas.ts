import { z } from "@hono/zod-openapi";
import { webhookEventTypes } from "../webhooks/event-types";
import { MESSAGES_PER_JOB } from "../webhooks/publish";

const URL_RULE = "url must be an absolute http or https URL of at most 2000 characters.";

/** `POST /api/admin/webhooks`: where to send which events. */
export const endpointDefinitionSchema = z
  .strictObject(
    {
      url: z
        .string({ error: URL_RULE })
        .max(2000, URL_RULE)
        .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), URL_RULE)
        .openapi({
          description: "Where deliveries are POSTed.",
          example: "https://shop.example/hooks/flash",
        }),
      events: z
        .array(
          z.enum(webhookEventTypes, {
            error: `events must name known event types: ${webhookEventTypes.join(", ")}.`,
          }),
          {
            error: "events must be a list of event types.",
          },
        )
        .min(1, "events must name at least one event type.")
        .max(webhookEventTypes.length * 2, "events names too many types.")
        .openapi({ description: "The event types to deliver.", example: ["order.paid", "order.expired"] }),
    },
    { error: "The body must be a JSON object with url and events." },
  )
  .openapi("WebhookEndpointDefinition");

const endpointFields = {
  endpointId: z.string().openapi({ example: "ep_5f0c3a9e1b2d4c6e8f0a1b2c" }),
  url: z.string().openapi({ example: "https://shop.example/hooks/flash" }),
  events: z.array(z.enum(webhookEventTypes)),
  createdAt: z.iso.datetime(),
};

/** An endpoint as listed: never its secret. */
export const endpointSchema = z.strictObject(endpointFields).openapi("WebhookEndpoint");

const secretField = z.string().openapi({
  description:
    "The signing secret (`whsec_` and base64), for Standard Webhooks' `Webhook(secret).verify`. Shown only in this answer.",
  example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
});

/** `POST /api/admin/webhooks` answer: the endpoint and its secret, shown this once. */
export const createdEndpointSchema = z
  .strictObject({ ...endpointFields, secret: secretField })
  .openapi("WebhookEndpointCreated");

export const endpointListSchema = z
  .strictObject({ endpoints: z.array(endpointSchema) })
  .openapi("WebhookEndpointList");

export const rotatedSecretSchema = z.strictObject({ secret: secretField }).openapi("WebhookSecretRotated");

export const endpointIdParam = z.object({
  endpointId: z.string().openapi({
    param: { name: "endpointId", in: "path" },
    description: "The endpoint's id (an id that is not one is 404 NOT_FOUND).",
    example: "ep_5f0c3a9e1b2d4c6e8f0a1b2c",
  }),
});

export const testSentSchema = z
  .strictObject({ msgId: z.string().openapi({ description: "The test message's `webhook-id`." }) })
  .openapi("WebhookTestSent");

export const deadLetterIdParam = z.object({
  id: z.coerce
    .number()
    .int()
    .min(1)
    .openapi({ param: { name: "id", in: "path" }, example: 12 }),
});

export const replayedSchema = z.strictObject({ replayed: z.literal(true) }).openapi("DeadLetterReplayed");

const payloadSchema = z.object({
  type: z.string().max(100),
  timestamp: z.string().max(100),
  data: z.record(z.string(), z.unknown()),
});

/** `POST /api/jobs/webhook-delivery`: messages for one endpoint, delivered in order. */
export const deliveryJobSchema = z
  .strictObject({
    endpointId: z.string().max(100),
    messages: z
      .array(z.strictObject({ msgId: z.string().min(1).max(300), payload: payloadSchema }))
      .min(1)
      .max(MESSAGES_PER_JOB),
  })
  .openapi("WebhookDeliveryJob");

export const deliveryResultSchema = z
  .strictObject({
    delivered: z.int().min(0).openapi({ description: "Messages the endpoint answered 2xx." }),
    dropped: z.boolean().openapi({ description: "The endpoint was removed: nothing was sent." }),
  })
  .openapi("WebhookDeliveryResult");
