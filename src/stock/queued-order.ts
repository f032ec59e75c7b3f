/** A reservation as the reservation script wrote it into the sale's `orders` hash (and the job body). */
export type QueuedOrder = {
  orderId: string;
  saleId: string;
  userId: string;
  quantity: number;
  createdAt: number;
  expiresAt: number;
  /** the Redis generation that reserved it (see lua/rebuild-sale.lua) */
  epoch: number;
  /** the lines (absent in documents from before variants: one line of the sale's only variant) */
  items?: QueuedItem[];
};

/** A line as the reservation script writes it: the name is the variant's, looked up when shown. */
export type QueuedItem = { variantId: string; quantity: number; priceCents: number };

/** Parses a queued order document from Redis; null if absent or not one of ours. */
export function parseQueuedOrder(saleId: string, json: string | null): QueuedOrder | null {
  if (!json) return null;
  const doc = JSON.parse(json) as Partial<QueuedOrder>;
  if (typeof doc.orderId !== "string" || typeof doc.userId !== "string") return null;
  return {
    orderId: doc.orderId,
    saleId,
    userId: doc.userId,
    quantity: Number(doc.quantity),
    createdAt: Number(doc.createdAt),
    expiresAt: Number(doc.expiresAt),
    epoch: Number(doc.epoch ?? 1),
    ...(Array.isArray(doc.items) ? { items: doc.items.map(queuedItem) } : {}),
  };
}

function queuedItem(item: Partial<QueuedItem>): QueuedItem {
  return {
    variantId: String(item.variantId),
    quantity: Number(item.quantity),
    priceCents: Number(item.priceCents),
  };
}
