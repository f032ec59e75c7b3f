import { type OpenAPIHono, z } from "@hono/zod-openapi";
import {
  orderEventSteps,
  TEST_EVENT_TYPE,
  type WebhookEventType,
  webhookEventTypes,
} from "../webhooks/event-types";
import { operatorSaleSchema } from "./admin-schemas";
import { orderSchema } from "./order-schemas";

const version = z.int().min(1).openapi({
  description:
    "Increases with every change of the order (or sale): a receiver that has seen a higher version of the same order (or sale) drops this one. A sale's versions follow the order of the states its events describe (each `Sale` is read at one instant, and a reading older than one already announced is not announced), so the highest version seen is the newest state.",
  example: 3,
});

const orderData = orderSchema.extend({ version }).openapi("OrderEventData");
const saleData = operatorSaleSchema.extend({ version }).openapi("SaleEventData");

/** What each event announces. */
const MEANING: Record<WebhookEventType, string> = {
  "order.reserved":
    "Units were reserved for a shopper (the order is written; `status` is `queued`, version 1).",
  "order.awaiting_payment": "The order is written and waits for payment (version 2).",
  "order.paid": "The order is paid (version 3).",
  "order.expired": "The payment window closed unpaid; the units went back to the sale (version 3).",
  "order.cancelled": "The shopper cancelled; the units went back to the sale (version 3).",
  "order.refunded":
    "A payment was refunded (one that landed after the order expired or was cancelled; version 4).",
  "sale.live":
    "The sale opened (or stock came back to a sold-out sale); announced at creation for a sale live at once, else by the minute sweep.",
  "sale.paused":
    "The sale was paused (by an operator, announced by the pause route; or by the reconciliation on a drift, announced by the minute sweep). A sale paused before it opens is announced paused when it opens.",
  "sale.resumed":
    "The paused sale takes buys again (live, or sold out: see `status`); announced by the resume route.",
  "sale.sold_out":
    "Nothing is left; announced by the order write that took the last unit (or the minute sweep).",
  "sale.ended": "The sale's window closed; announced by the minute sweep.",
  "sale.stock_adjusted":
    "An operator added or removed stock (`Sale` as read after the adjustment; units coming back to a sold-out sale also announce `sale.live`).",
};

const headers = z.object({
  "webhook-id": z
    .string()
    .openapi({ description: "The message id, the same on every retry: deduplicate by it." }),
  "webhook-timestamp": z
    .string()
    .openapi({ description: "Seconds since the epoch when this attempt was signed." }),
  "webhook-signature": z.string().openapi({
    description:
      "Space-separated `v1,<base64 HMAC-SHA256>` signatures of `id.timestamp.body`, one per valid secret (two for 24 h after a rotation). Verify with Standard Webhooks' `Webhook(secret).verify(body, headers)`.",
  }),
});

function eventRoute(type: string, description: string, data: z.ZodType) {
  return {
    method: "post" as const,
    path: type,
    tags: ["Webhooks"],
    summary: type,
    description: `${description} Delivered at least once (retried with backoff until the endpoint answers 2xx), signed as Standard Webhooks asks.`,
    request: {
      headers,
      body: {
        required: true,
        content: {
          "application/json": {
            schema: z.strictObject({
              type: z.literal(type),
              timestamp: z.iso.datetime().openapi({ description: "When the event happened." }),
              data,
            }),
          },
        },
      },
    },
    responses: {
      200: {
        description: "Any 2xx acknowledges the delivery; anything else (or no answer in 10 s) is retried.",
      },
    },
  };
}

/** Describes every event type in the document's 3.1 `webhooks` section (and the test event). */
export function registerWebhookEvents(registry: OpenAPIHono["openAPIRegistry"]): void {
  for (const type of webhookEventTypes) {
    const data = type in orderEventSteps ? orderData : saleData;
    registry.registerWebhook(eventRoute(type, MEANING[type], data));
  }
  registry.registerWebhook(
    eventRoute(
      TEST_EVENT_TYPE,
      "Sent by `POST /api/admin/webhooks/{endpointId}/test` to that endpoint only.",
      z.strictObject({ endpointId: z.string(), url: z.string() }),
    ),
  );
}
