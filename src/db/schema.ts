import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgSequence,
  pgTable,
  primaryKey,
  smallint,
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
    /** Bumped by every pause or resume under the row's lock, and carried into Redis: the later one wins there too. */
    pauseVersion: integer("pause_version").notNull().default(0),
    /** Redis generation: incremented each time the sale's Redis state is rebuilt from Postgres. */
    epoch: integer("epoch").notNull().default(1),
    createdAt: ts("created_at").notNull().defaultNow(),
    /** "open" | "queue" | "draw" (src/room/) */
    admission: text("admission").notNull().default("open"),
    proofOfWork: boolean("proof_of_work").notNull().default(false),
    /** plain text shown on the pages (up to 2,000 characters) */
    description: text("description"),
    /** an https: URL or a path on the engine's own origin */
    imageUrl: text("image_url"),
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

/**
 * The variants of a sale (sizes, tiers, colours), 1 to 50: each with its own price and stock, and
 * optionally its own per-shopper cap under the sale's. A sale made without variants has one,
 * `default`. The sale's `initial_stock` and `stock_adjustments` are the sums of its variants'.
 */
export const saleVariants = pgTable(
  "sale_variants",
  {
    saleId: text("sale_id")
      .notNull()
      .references(() => sales.id),
    variantId: text("variant_id").notNull(),
    /** the operator's order */
    position: smallint("position").notNull(),
    name: text("name").notNull(),
    priceCents: integer("price_cents").notNull(),
    initialStock: integer("initial_stock").notNull(),
    stockAdjustments: integer("stock_adjustments").notNull().default(0),
    perUserLimit: integer("per_user_limit"),
    description: text("description"),
    imageUrl: text("image_url"),
  },
  (t) => [
    primaryKey({ columns: [t.saleId, t.variantId] }),
    check("sale_variants_id_check", sql`${t.variantId} ~ '^[A-Za-z0-9_-]{1,32}$'`),
    check("sale_variants_price_cents_check", sql`${t.priceCents} >= 0`),
    check("sale_variants_initial_stock_check", sql`${t.initialStock} >= 0`),
    check("sale_variants_stock_check", sql`${t.initialStock} + ${t.stockAdjustments} >= 0`),
    check("sale_variants_per_user_limit_check", sql`${t.perUserLimit} is null or ${t.perUserLimit} >= 1`),
  ],
);

/** One line of an order: a variant, its units and the unit price it was reserved at. */
export type OrderItem = { variantId: string; name: string; quantity: number; priceCents: number };

export const paymentStatuses = ["pending", "paid", "refunded"] as const;
export type PaymentStatus = (typeof paymentStatuses)[number];

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
    /** who took (or is taking) the payment: `stripe` | `manual` | `local` (src/payments/) */
    paymentProvider: text("payment_provider"),
    /** `pending` (a checkout is open) | `paid` | `refunded` (paid after the order expired or was cancelled) */
    paymentStatus: text("payment_status", { enum: paymentStatuses }),
    paymentAmountCents: integer("payment_amount_cents"),
    paymentCurrency: text("payment_currency"),
    /** the provider's checkout (a Stripe Checkout Session): the same one on every retry */
    checkoutId: text("checkout_id"),
    checkoutUrl: text("checkout_url"),
    /** when the engine expired the provider's checkout after the order expired or was cancelled */
    checkoutClosedAt: ts("checkout_closed_at"),
    refundRef: text("refund_ref"),
    refundedAt: ts("refunded_at"),
    /**
     * the W3C `traceparent` of the order write that inserted it (with tracing on): its payment, later and
     * in a request of its own, continues the buy's trace
     */
    traceParent: text("trace_parent"),
    /** the lines, each variant once, positive quantities (order_items_valid: drizzle/0013, in PL/pgSQL since 0017) */
    items: jsonb("items").$type<OrderItem[]>().notNull(),
    /** the sum of quantity × price over the lines: what checkout charges */
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
  },
  (t) => [
    index("orders_sale_status_idx").on(t.saleId, t.status),
    /** the reconciliation's watermark: a sale's orders in the order they were written */
    index("orders_sale_written_idx").on(t.saleId, t.writtenAt, t.id),
    index("orders_unrestored_idx")
      .on(t.saleId)
      .where(sql`${t.status} in ('expired', 'cancelled') and ${t.restoredAt} is null`),
    check("orders_quantity_check", sql`${t.quantity} >= 1`),
    check("orders_status_check", sql`${t.status} in ('awaiting_payment', 'paid', 'expired', 'cancelled')`),
    check("orders_paid_check", sql`(${t.status} = 'paid') = (${t.paidAt} is not null)`),
    check("orders_restored_check", sql`${t.restoredAt} is null or ${t.status} in ('expired', 'cancelled')`),
    check("orders_items_check", sql`order_items_valid(${t.items}, ${t.quantity}, ${t.amountCents})`),
    check(
      "orders_refunded_check",
      sql`${t.paymentStatus} is distinct from 'refunded' or ${t.status} in ('expired', 'cancelled')`,
    ),
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
  (t) => [
    primaryKey({ columns: [t.saleId, t.userId] }),
    check("holdings_units_check", sql`${t.units} >= 0`),
    /** the stats' users over the limit, read without scanning the sale's holdings */
    index("holdings_over_limit_idx").on(t.saleId).where(sql`${t.units} > ${t.perUserLimit}`),
  ],
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
  /** the variant adjusted (null: recorded before variants, or from a ledger entry that named none) */
  variantId: text("variant_id"),
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

/** A secret an endpoint rotated out: it keeps signing until `expiresAt` (ISO-8601, UTC). */
export type RetiredSecret = { secret: string; expiresAt: string };

/** The shop's webhook endpoints (src/webhooks/): where events go, which ones, and the signing secrets. */
export const webhookEndpoints = pgTable("webhook_endpoints", {
  id: text("id").primaryKey(),
  url: text("url").notNull(),
  events: jsonb("events").$type<string[]>().notNull(),
  secret: text("secret").notNull(),
  /**
   * The secrets rotated out, oldest first, each still signing until its `expiresAt` (24 h after its
   * rotation; src/webhooks/endpoint-store.ts keeps at most `MAX_RETIRED_SECRETS` valid ones).
   */
  retiredSecrets: jsonb("retired_secrets").$type<RetiredSecret[]>().notNull().default([]),
  createdAt: ts("created_at").notNull().defaultNow(),
});

/**
 * Webhook messages written with the state change that caused them and not yet handed to QStash: a row
 * lives from its statement until its delivery job is published (the minute sweep publishes leftovers).
 */
export const webhookOutbox = pgTable(
  "webhook_outbox",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    endpointId: text("endpoint_id").notNull(),
    msgId: text("msg_id").notNull(),
    event: jsonb("event").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [index("webhook_outbox_created_idx").on(t.createdAt)],
);

/**
 * Each sale's status as last recorded for webhook endpoints (src/webhooks/sale-status.ts), from the newest
 * read of the sale so far: a read older than `(epoch, stamp)` (src/webhooks/sale-snapshot.ts) changes
 * nothing, so the sale events announced from its changes carry versions in the order of the states.
 */
export const webhookSaleStatus = pgTable("webhook_sale_status", {
  saleId: text("sale_id").primaryKey(),
  status: text("status").notNull(),
  /** the status before the last read recorded (the same when that read found no change) */
  previousStatus: text("previous_status"),
  /** the Redis generation (sales.epoch) of the read recorded */
  epoch: integer("epoch").notNull().default(0),
  /** the read recorded: its place among the sale's reads in that generation */
  stamp: bigint("stamp", { mode: "number" }).notNull().default(0),
});

/** The `version` of sale events: increasing, so a receiver can drop a stale one. */
export const webhookVersions = pgSequence("webhook_versions");

/**
 * Payment provider events already handled (a Stripe event id), so a duplicated or replayed delivery
 * changes nothing; `outcome` says what it came to (paid, refunded, mismatch, ignored, …).
 */
export const paymentEvents = pgTable("payment_events", {
  id: text("id").primaryKey(),
  provider: text("provider").notNull(),
  type: text("type").notNull(),
  orderId: text("order_id"),
  outcome: text("outcome").notNull(),
  at: ts("at").notNull().defaultNow(),
});

/**
 * A sale's figures as counters, so the operator's stats read one row whatever the sale's size. Kept by
 * statement-level triggers on `orders` (migration `sale_counters_triggers`, hand-written): every statement that
 * writes orders, moves their status, or marks their units restored changes the counters
 * in that same statement, from its own transition tables, so a duplicate or reordered delivery (which
 * changes no row) changes no counter, and every caller (order writes, pay, cancel, expiry, void,
 * rebuild) is covered without knowing. The reconciliation recounts them (`recovery/sale-counters.ts`).
 * A sale's figures are the sum of its rows: each database session adds to its own `shard` (its backend
 * pid modulo 8), so concurrent order writes of one sale do not queue behind one row's lock.
 */
export const saleCounters = pgTable(
  "sale_counters",
  {
    saleId: text("sale_id").notNull(),
    shard: smallint("shard").notNull().default(0),
    orders: integer("orders").notNull().default(0),
    awaitingPayment: integer("awaiting_payment").notNull().default(0),
    paid: integer("paid").notNull().default(0),
    expired: integer("expired").notNull().default(0),
    cancelled: integer("cancelled").notNull().default(0),
    /** units of awaiting_payment and paid orders */
    liveUnits: integer("live_units").notNull().default(0),
    /** units of expired and cancelled orders not yet back in Redis (restored_at null) */
    unrestoredUnits: integer("unrestored_units").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.saleId, t.shard] })],
);

/**
 * The operators' audit log (src/db/audit-log.ts, drizzle/0012_audit_log.sql): append-only (a trigger
 * refuses UPDATE, DELETE and TRUNCATE) and hash-chained (a trigger sets `id`, `prev_hash` and `hash`).
 */
export const auditLog = pgTable(
  "audit_log",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    at: ts("at").notNull().defaultNow(),
    actor: text("actor").notNull(),
    action: text("action").notNull(),
    saleId: text("sale_id"),
    target: text("target"),
    before: jsonb("before"),
    after: jsonb("after"),
    requestId: text("request_id").notNull(),
    prevHash: text("prev_hash").notNull(),
    hash: text("hash").notNull(),
  },
  (t) => [index("audit_log_sale_idx").on(t.saleId, t.id)],
);

/**
 * What a queue or draw sale's waiting room promised, kept beside Redis so a rebuild after a Redis loss
 * gives the room back as it was (src/room/room-record.ts): the seed from the sale's creation (the
 * `seedHash` published then stays the one the draw opens), and, written from the room's journal before
 * any answer shows them, the line's seal and the frontier, the cutoff and a pause's start. `v` is the
 * room's journal position those fields were read at (an older reading never overwrites a newer one).
 */
export const roomRecords = pgTable("room_records", {
  saleId: text("sale_id")
    .primaryKey()
    .references(() => sales.id, { onDelete: "cascade" }),
  seed: text("seed").notNull(),
  seedHash: text("seed_hash").notNull(),
  /** the room hash's durable fields as Redis held them (frontier, cutoff, sealed, drawnAt, entriesHash, …) */
  fields: jsonb("fields").notNull().default({}),
  /** the sorted entry list the seal published (a draw's `entries`) */
  entries: jsonb("entries"),
  v: bigint("v", { mode: "number" }).notNull().default(0),
  /** the journal position up to which every change of the room is here */
  through: bigint("through", { mode: "number" }).notNull().default(0),
  /**
   * the room's life in Redis: one more at each restore (the room hash carries it too); a journal page
   * read from an earlier life (a write in flight across a loss) is not written
   */
  gen: integer("gen").notNull().default(0),
  /** recorded from the room's opening (false: a room from before records, whose first change made it) */
  complete: boolean("complete").notNull().default(false),
});

/**
 * A waiting room's tickets as Redis last showed them (room-step.lua's ticket JSON: id, join number,
 * position, state, units held, admission end, joined at), each with the journal position `v` of its last
 * change: an older reading never overwrites a newer one.
 */
export const roomTickets = pgTable(
  "room_tickets",
  {
    saleId: text("sale_id")
      .notNull()
      .references(() => sales.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
    ticket: jsonb("ticket").notNull(),
    v: bigint("v", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.saleId, t.userId] })],
);
