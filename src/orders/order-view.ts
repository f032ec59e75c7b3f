import type { OrderItem, PaymentStatus, StoredOrderStatus } from "../db/schema";
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
  /** the lines: variant, its name, units and unit price; `quantity` is their total */
  items: OrderItem[];
  /** the sum of quantity × price over the lines: what checkout charges */
  amountCents: number;
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
  items: OrderItem[];
  amountCents: number;
};

/** Names and prices of a sale's variants, for a queued order's lines (Redis keeps ids, units and prices). */
export type VariantNames = ReadonlyMap<string, string>;

/**
 * A queued order as `Order`: its lines from the reservation (names from the sale's variants); a
 * document from before variants has one line of the sale's only variant (`fallback`).
 */
export function queuedView(
  order: QueuedOrder,
  variants: { variantId: string; name: string; priceCents: number }[] = [],
): OrderView {
  const names = new Map(variants.map((v) => [v.variantId, v.name]));
  const only = variants.length === 1 ? variants[0] : undefined;
  const items: OrderItem[] = order.items
    ? order.items.map((i) => ({ ...i, name: names.get(i.variantId) ?? i.variantId }))
    : only
      ? [
          {
            variantId: only.variantId,
            name: only.name,
            quantity: order.quantity,
            priceCents: only.priceCents,
          },
        ]
      : [];
  return {
    orderId: order.orderId,
    saleId: order.saleId,
    quantity: order.quantity,
    status: "queued",
    createdAt: new Date(order.createdAt).toISOString(),
    expiresAt: new Date(order.expiresAt).toISOString(),
    items: items.map(({ variantId, name, quantity, priceCents }) => ({
      variantId,
      name,
      quantity,
      priceCents,
    })),
    amountCents: items.reduce((sum, i) => sum + i.quantity * i.priceCents, 0),
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
    items: row.items.map((i) => ({ ...i })),
    amountCents: row.amountCents,
  };
  if (row.paidAt) view.paidAt = row.paidAt.toISOString();
  if (row.payment) view.payment = { ...row.payment };
  return view;
}
