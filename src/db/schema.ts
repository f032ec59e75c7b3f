import { sql } from "drizzle-orm";
import {
  bigserial,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

/** A flash sale: the source of truth for its definition (Redis holds a preheated copy). */
export const sales = pgTable(
  "sales",
  {
    id: text("id").primaryKey(),
    productId: text("product_id").notNull(),
    name: text("name").notNull(),
    priceCents: integer("price_cents").notNull(),
    initialStock: integer("initial_stock").notNull(),
    stockAdjustments: integer("stock_adjustments").notNull().default(0),
    perUserLimit: integer("per_user_limit").notNull(),
    startsAt: ts("starts_at").notNull(),
    endsAt: ts("ends_at").notNull(),
    paymentWindowSeconds: integer("payment_window_seconds").notNull(),
    productToken: text("product_token").notNull(),
    paused: boolean("paused").notNull().default(false),
    /** Redis generation: incremented each time the sale's Redis state is rebuilt from Postgres. */
    epoch: integer("epoch").notNull().default(1),
    createdAt: ts("created_at").notNull().defaultNow(),
    /** "open" | "queue" | "draw" (src/admission/) */
    admission: text("admission").notNull().default("open"),
    proofOfWork: boolean("proof_of_work").notNull().default(false),
  },
  (t) => [
    uniqueIndex("sales_product_token_key").on(t.productToken),
    check("sales_price_cents_check", sql`${t.priceCents} >= 0`),
    check("sales_initial_stock_check", sql`${t.initialStock} >= 0`),
    check("sales_stock_check", sql`${t.initialStock} + ${t.stockAdjustments} >= 0`),
    check("sales_per_user_limit_check", sql`${t.perUserLimit} >= 1`),
    check("sales_window_check", sql`${t.endsAt} > ${t.startsAt}`),
    check("sales_payment_window_check", sql`${t.paymentWindowSeconds} >= 1`),
  ],
);

export const orderStatuses = ["awaiting_payment", "paid", "expired", "cancelled"] as const;
export type StoredOrderStatus = (typeof orderStatuses)[number];

/** One row per reservation; its status is decided here, by conditional updates, and nowhere else. */
export const orders = pgTable(
  "orders",
  {
    id: text("id").primaryKey(),
    saleId: text("sale_id")
      .notNull()
      .references(() => sales.id),
    userId: text("user_id").notNull(),
    quantity: integer("quantity").notNull(),
    status: text("status", { enum: orderStatuses }).notNull(),
    createdAt: ts("created_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    writtenAt: ts("written_at").notNull().defaultNow(),
    paidAt: ts("paid_at"),
    paymentRef: text("payment_ref"),
    expiredAt: ts("expired_at"),
    cancelledAt: ts("cancelled_at"),
    /** when the units went back to Redis (expired and cancelled orders only) */
    restoredAt: ts("restored_at"),
    /** the Redis generation (sales.epoch) whose stock counts this order's units */
    epoch: integer("epoch").notNull().default(1),
  },
  (t) => [
    index("orders_sale_status_idx").on(t.saleId, t.status),
    index("orders_unrestored_idx")
      .on(t.saleId)
      .where(sql`${t.status} in ('expired', 'cancelled') and ${t.restoredAt} is null`),
    check("orders_quantity_check", sql`${t.quantity} >= 1`),
    check("orders_status_check", sql`${t.status} in ('awaiting_payment', 'paid', 'expired', 'cancelled')`),
    check("orders_paid_check", sql`(${t.status} = 'paid') = (${t.paidAt} is not null)`),
    check("orders_restored_check", sql`${t.restoredAt} is null or ${t.status} in ('expired', 'cancelled')`),
  ],
);

/**
 * Units each user holds in live orders of a sale. The per-user limit is enforced where orders are
 * acknowledged (reserve-stock.lua), not here: an acknowledged order is written whatever it does to its
 * user's holding. A holding above `per_user_limit` (a write that arrived late, after a Redis loss) is a
 * detected violation that the sale's stats report (`usersOverLimit`, `invariantHolds`).
 */
export const holdings = pgTable(
  "holdings",
  {
    saleId: text("sale_id")
      .notNull()
      .references(() => sales.id),
    userId: text("user_id").notNull(),
    units: integer("units").notNull(),
    perUserLimit: integer("per_user_limit").notNull(),
  },
  (t) => [primaryKey({ columns: [t.saleId, t.userId] }), check("holdings_units_check", sql`${t.units} >= 0`)],
);

export const orderEventTypes = ["written", "paid", "expired", "cancelled", "restored"] as const;

/** The database side of seed 003's flow record: one row per order state change, once each. */
export const orderEvents = pgTable(
  "order_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    orderId: text("order_id")
      .notNull()
      .references(() => orders.id),
    saleId: text("sale_id").notNull(),
    type: text("type", { enum: orderEventTypes }).notNull(),
    at: ts("at").notNull().defaultNow(),
    detail: jsonb("detail"),
  },
  (t) => [
    uniqueIndex("order_events_order_type_key").on(t.orderId, t.type),
    check(
      "order_events_type_check",
      sql`${t.type} in ('written', 'paid', 'expired', 'cancelled', 'restored')`,
    ),
  ],
);

/** Operator stock adjustments (the database side of the "a:" ledger entries). */
export const stockAdjustments = pgTable("stock_adjustments", {
  id: text("id").primaryKey(),
  saleId: text("sale_id")
    .notNull()
    .references(() => sales.id),
  delta: integer("delta").notNull(),
  at: ts("at").notNull().defaultNow(),
});

/** Jobs QStash gave up on (failure callback), for an operator to see. */
export const deadLetters = pgTable("dead_letters", {
  id: bigserial("id", { mode: "number" }).primaryKey(),
  messageId: text("message_id").notNull().unique(),
  url: text("url").notNull(),
  status: integer("status"),
  body: text("body"),
  responseBody: text("response_body"),
  at: ts("at").notNull().defaultNow(),
});
