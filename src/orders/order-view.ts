import type { PaymentStatus, StoredOrderStatus } from "../db/schema";
import type { QueuedOrder } from "../stock/queued-order";

export type OrderStatus = "queued" | StoredOrderStatus;

/** The contract's `payment` of an order: who takes it, how far it got, what it was for. */
export type OrderPayment = {
  provider: "stripe" | "manual" | "local";
  status: PaymentStatus;
  amountCents: number;
  currency: string;
};

/** The contract's `Order` body (same shape whether it comes from Redis or from Postgres). */
export type OrderView = {
  orderId: string;
  saleId: string;
  quantity: number;
  status: OrderStatus;
  createdAt: string;
  expiresAt: string;
  paidAt?: string;
  payment?: OrderPayment;
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
  /** Set once a payment provider took part (a checkout opened, a payment confirmed or refunded). */
  payment: OrderPayment | null;
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
  if (row.payment) view.payment = { ...row.payment };
  return view;
}
