import { z } from "@hono/zod-openapi";
import { saleIdOfOrder } from "../ids";
import { MAX_QUANTITY } from "./buy-schemas";

/** The most orders one job carries: publishers batch at most 50 (publish buffer, sweeper, reconciliation). */
export const MAX_ORDERS_PER_JOB = 50;
/** Milliseconds since the epoch a Date can hold. */
const MAX_TIME = 8.64e15;

const time = (description: string) =>
  z
    .number({ error: `${description} must be a time in milliseconds since the epoch.` })
    .gt(0, `${description} must be a time in milliseconds since the epoch.`)
    .max(MAX_TIME, `${description} must be a time a Date can hold.`)
    .openapi({ description: `${description}, in milliseconds since the epoch.`, example: 1767261600123 });

/** The fields every job entry shares (the order id must name the sale: see `namesItsSale`). */
const jobEntry = z.object({
  orderId: z.string().openapi({ example: "s4k2x9q1m0abc-0k3j5h7g9f1d3s5a7p9o" }),
  saleId: z.string().openapi({ example: "s4k2x9q1m0abc" }),
  userId: z
    .string()
    .min(1, "userId must be 1 to 128 characters.")
    .max(128, "userId must be 1 to 128 characters.")
    .openapi({ description: "The shopper (the token's `sub`).", example: "user-42" }),
  quantity: z
    .int({ error: `quantity must be an integer from 1 to ${MAX_QUANTITY}.` })
    .min(1, `quantity must be an integer from 1 to ${MAX_QUANTITY}.`)
    .max(MAX_QUANTITY, `quantity must be an integer from 1 to ${MAX_QUANTITY}.`)
    .openapi({ example: 1 }),
});

const namesItsSale = (e: { orderId: unknown; saleId: unknown }) =>
  typeof e.orderId === "string" && saleIdOfOrder(e.orderId) === e.saleId;
const namesItsSaleIssue = { path: ["orderId"], message: "orderId must name the order's sale (saleId)." };

/** A line of an order as the reservation script wrote it: the variant, its units, its unit price. */
const jobItem = z.object({
  variantId: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, "variantId must be 1 to 32 of A-Z a-z 0-9 _ -."),
  quantity: z.int().min(1).max(MAX_QUANTITY),
  priceCents: z.int().min(0).max(1_000_000_000),
});

/** One order as the reservation script wrote it (reserve-stock.lua), carried by order and timeout jobs. */
export const jobOrderSchema = jobEntry
  .extend({
    items: z
      .array(jobItem)
      .min(1)
      .max(50)
      .optional()
      .openapi({ description: "The order's lines (absent: one line of the sale's only variant)." }),
    createdAt: time("When the stock was reserved"),
    expiresAt: time("When the payment window closes"),
    epoch: z
      .int({ error: "epoch must be an integer of at least 1." })
      .min(1, "epoch must be an integer of at least 1.")
      .default(1)
      .openapi({ description: "The sale's Redis generation that reserved the order." }),
  })
  .refine(namesItsSale, namesItsSaleIssue)
  .refine((o) => !o.items || linesAddUp(o.items, o.quantity), {
    path: ["items"],
    message: "items must name each variant once and add up to quantity.",
  })
  .openapi("JobOrder");

function linesAddUp(items: { variantId: string; quantity: number }[], quantity: number): boolean {
  const ids = new Set(items.map((i) => i.variantId));
  return ids.size === items.length && items.reduce((sum, i) => sum + i.quantity, 0) === quantity;
}

/**
 * The entries of a batch without those that are not orders (logged): one bad entry must not hold up
 * the others. A batch with none that is, or with too many entries, is left whole for the schema to refuse.
 */
function withoutNonOrders(entries: unknown): unknown {
  if (!Array.isArray(entries) || entries.length > MAX_ORDERS_PER_JOB) return entries;
  const orders = entries.filter((e) => jobOrderSchema.safeParse(e).success);
  if (orders.length === 0 || orders.length === entries.length) return entries;
  console.error(`job: ${entries.length - orders.length} entries are not orders; the rest go on`);
  return orders;
}

const orderBatch = z.object({
  orders: z.preprocess(
    withoutNonOrders,
    z
      .array(jobOrderSchema)
      .min(1, `A job carries 1 to ${MAX_ORDERS_PER_JOB} orders.`)
      .max(MAX_ORDERS_PER_JOB, `A job carries 1 to ${MAX_ORDERS_PER_JOB} orders.`)
      .openapi({ description: "An entry that is not an order is left out (and logged); the rest go on." }),
  ),
});

/**
 * An order-write or payment-timeout job: `{"orders": [...]}` as enqueueOrders publishes it, or one bare
 * order. Parses to the orders it carries (1 to 50, entries that are not orders left out); a job with
 * none is refused.
 *
 * @example
 * orderJobSchema.parse({ orders: [order, { junk: true }] }) // → [order]
 */
export const orderJobSchema = z
  .union([orderBatch, jobOrderSchema], {
    error: `A job body is {"orders": [...]} with 1 to ${MAX_ORDERS_PER_JOB} orders, or one order.`,
  })
  .transform((job) => ("orders" in job ? job.orders : [job]))
  .openapi({ description: "A batch of orders, or one order." });

/** A void job's body: the buy attempt the buy route gave up on, as it hands it over (void-order.ts). */
export const voidJobSchema = jobEntry
  .extend({
    idempotencyKey: z
      .string({ error: "idempotencyKey must be null or the attempt's Idempotency-Key." })
      .regex(/^[\x21-\x7e]{1,128}$/, "idempotencyKey must be 1 to 128 visible ASCII characters.")
      .nullable()
      .openapi({ description: "The attempt's Idempotency-Key, or null (required either way)." }),
  })
  .refine(namesItsSale, namesItsSaleIssue)
  .openapi("VoidJob");

/**
 * A field of QStash's callback: taken when it is a `type` (a string, an integer) and ignored otherwise,
 * never refused (a dead letter is recorded whatever QStash sends). The document accepts any value and
 * names the type QStash sends in the description.
 */
const ignoredUnless = <T extends z.ZodType>(schema: T, type: "string" | "integer", description: string) =>
  z
    .unknown()
    .transform((v): z.output<T> | undefined => {
      const taken = schema.safeParse(v);
      return taken.success ? taken.data : undefined;
    })
    .optional()
    .openapi({
      description: `${description} QStash sends ${type === "integer" ? "an integer" : "a string"}; a value of another type is ignored, not refused.`,
    });

/** QStash's failure callback for a job it gave up on; other fields QStash sends are ignored. */
export const failureCallbackSchema = z
  .object(
    {
      sourceMessageId: ignoredUnless(z.string(), "string", "The failed message's id."),
      url: ignoredUnless(z.string(), "string", "The job route it was delivered to."),
      status: ignoredUnless(z.int(), "integer", "The last answer's status."),
      body: ignoredUnless(z.string(), "string", "The last answer's body, base64."),
      sourceBody: ignoredUnless(z.string(), "string", "The job's body, base64."),
    },
    { error: "A failure callback body is a JSON object." },
  )
  .openapi("FailureCallback");

export const orderWriteResultSchema = z
  .strictObject({
    orders: z.int().min(1).openapi({ description: "Orders the job carried (entries that were orders)." }),
    inserted: z.int().min(0).openapi({ description: "Rows written now (duplicates write nothing)." }),
    unknownSale: z.int().min(0).openapi({ description: "Orders left out: their sale does not exist." }),
  })
  .openapi("OrderWriteResult");

export const paymentTimeoutResultSchema = z
  .strictObject({
    orders: z.int().min(1).openapi({ description: "Orders the job carried (entries that were orders)." }),
    expired: z.int().min(0).openapi({ description: "Orders expired now (their units are back)." }),
  })
  .openapi("PaymentTimeoutResult");

export const voidResultSchema = z
  .strictObject({
    orderId: z.string(),
    outcome: z.enum(["voided", "already_final", "not_reserved", "claimed"]).openapi({
      description:
        "`voided`: the reservation was given back; `not_reserved`: nothing stood, a tombstone keeps a late run from reserving; `already_final`: voided, cancelled or expired before, nothing changed; `claimed`: a keyed retry got it back, so it stands.",
    }),
  })
  .openapi("VoidResult");

export const failureRecordedSchema = z.strictObject({ recorded: z.literal(true) }).openapi("FailureRecorded");
