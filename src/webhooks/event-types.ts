/** Every event type an endpoint may subscribe to (the contract's "Webhooks to the shop"). */
export const webhookEventTypes = [
  "order.reserved",
  "order.awaiting_payment",
  "order.paid",
  "order.expired",
  "order.cancelled",
  "order.refunded",
  "sale.live",
  "sale.paused",
  "sale.resumed",
  "sale.sold_out",
  "sale.ended",
  "sale.stock_adjusted",
] as const;

export type WebhookEventType = (typeof webhookEventTypes)[number];

/** The type of the event `POST /api/admin/webhooks/:endpointId/test` sends (to that endpoint only). */
export const TEST_EVENT_TYPE = "webhook.test";

/**
 * What an order event says about its order, and its `version`. An order only moves forward (queued,
 * then awaiting payment, then one final status, then possibly refunded), so its version is its step:
 * the same event always carries the same version, and a later step a higher one. A refund keeps the
 * order's own status (`null` here).
 */
export const orderEventSteps = {
  "order.reserved": { status: "queued", version: 1 },
  "order.awaiting_payment": { status: "awaiting_payment", version: 2 },
  "order.paid": { status: "paid", version: 3 },
  "order.expired": { status: "expired", version: 3 },
  "order.cancelled": { status: "cancelled", version: 3 },
  "order.refunded": { status: null, version: 4 },
} as const;

export type OrderEventType = keyof typeof orderEventSteps;

/** The body of one delivered POST: `{"type","timestamp","data"}` (data is an Order or a Sale plus `version`). */
export type WebhookPayload = { type: string; timestamp: string; data: Record<string, unknown> };

/** One message as the outbox holds it and a delivery job carries it: its `webhook-id` and its body. */
export type WebhookMessage = { msgId: string; payload: WebhookPayload };

/** An outbox row: a message for one endpoint. */
export type OutboxEntry = WebhookMessage & { id: number; endpointId: string };
