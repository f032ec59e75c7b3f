import type { StoredOrderStatus } from "../db/schema";

export type OrderStatus = "queued" | StoredOrderStatus;

/** The contract's `Order` body (same shape whether it comes from Redis or from Postgres). */
export type OrderView = {
  orderId: string;
  saleId: string;
  quantity: number;
  status: OrderStatus;
  createdAt: string;
  expiresAt: string;
  paidAt?: string;
};

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
};

/** An order row as the repository reads it. */
export type OrderRow = {
  id: string;
  saleId: string;
  userId: string;
  quantity: number;
  status: StoredOrderStatus;
  createdAt: Date;
  expiresAt: Date;
  paidAt: Date | null;
  restoredAt: Date | null;
  epoch: number;
};

export function queuedView(order: QueuedOrder): OrderView {
  return {
    orderId: order.orderId,
    saleId: order.saleId,
    quantity: order.quantity,
    status: "queued",
    createdAt: new Date(order.createdAt).toISOString(),
    expiresAt: new Date(order.expiresAt).toISOString(),
  };
}

export function rowView(row: OrderRow): OrderView {
  const view: OrderView = {
    orderId: row.id,
    saleId: row.saleId,
    quantity: row.quantity,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
  };
  if (row.paidAt) view.paidAt = row.paidAt.toISOString();
  return view;
}

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
  };
}
