import { z } from "@hono/zod-openapi";
import type { RebuildReport } from "../recovery/rebuild";
import type { ReconcileReport } from "../recovery/reconcile-sale";
import { COUNTER_FIELDS } from "../recovery/sale-counters";
import type { SaleStats } from "../recovery/sale-stats";
import type { VariantStats } from "../recovery/variant-stats";
import type { TimelinePoint } from "../stock/timeline";

const count = (description: string, example: number) => z.int().min(0).openapi({ description, example });
const orderIds = (description: string) =>
  z.array(z.string()).openapi({ description, example: ["s4k2x9q1m0abc-0k3j5h7g9f1d3s5a7p9o"] });

/** One variant's figures in the stats: its units as the sale's are counted. */
const variantStatsSchema = z
  .strictObject({
    variantId: z.string().openapi({ example: "eu-42" }),
    stock: count("The variant's units for sale: its initial stock plus its adjustments.", 40),
    remaining: z.int().openapi({
      description: "The variant's units not reserved, as Redis holds them (below 0 only if sold twice).",
      example: 31,
    }),
    paidUnits: count("The variant's units in paid orders.", 6),
    liveUnits: count("The variant's units in queued, awaiting_payment and paid orders.", 9),
    pendingRestoreUnits: count("The variant's units of expired or cancelled orders not yet back.", 0),
    usersOverLimit: count("Shoppers holding more of this variant than its own cap, in either store.", 0),
  })
  .openapi("VariantStats") satisfies z.ZodType<VariantStats>;

/** `GET /api/admin/sales/{saleId}/stats` (and the `stats` event): the operator's figures and the invariant. */
export const saleStatsSchema = z
  .strictObject({
    stock: count("Units for sale: initial stock plus adjustments.", 1000),
    remaining: z.int().openapi({
      description: "Units not reserved, as Redis holds them (below 0 only if units were sold twice).",
      example: 880,
    }),
    queued: count("Orders reserved in Redis and not yet written to Postgres.", 3),
    awaitingPayment: count("Orders waiting to be paid.", 40),
    paid: count("Paid orders.", 70),
    expired: count("Orders whose payment window closed.", 5),
    cancelled: count("Cancelled orders.", 2),
    ordersInDb: count("Orders written to Postgres.", 117),
    ledgerEntries: count("Entries in the sale's Redis ledger (reservations, restores, adjustments).", 125),
    liveUnits: count("Units in queued, awaiting_payment and paid orders.", 120),
    pendingRestoreUnits: count("Units of expired or cancelled orders not yet back in the stock.", 0),
    usersOverLimit: count("Shoppers holding more than the per-user limit in either store.", 0),
    invariantHolds: z.boolean().openapi({
      description: "stock = remaining + live units (+ units being restored), and nobody over the limit.",
    }),
    invariantBreaks: z.array(z.string()).openapi({
      description: "What breaks the invariant, in words for the operator (empty while it holds).",
      example: [],
    }),
    variants: z.array(variantStatsSchema).openapi({
      description:
        "Each variant's figures, in the operator's order; the invariant holds per variant too (a sale made without variants has one, `default`, with the sale's figures).",
    }),
  })
  .openapi("SaleStats") satisfies z.ZodType<SaleStats>;

const outcomeCount = (description: string) => z.int().min(0).optional().openapi({ description });

/** One second of the live chart: how many buy attempts ended how (absent names: none). */
const timelinePointSchema = z
  .strictObject({
    second: z.int().openapi({ description: "The second (Unix time).", example: 1_795_000_000 }),
    counts: z.strictObject({
      reserved: outcomeCount("Attempts that reserved stock."),
      rateLimited: outcomeCount("Attempts refused with 429."),
      notStarted: outcomeCount("Attempts before the sale started."),
      ended: outcomeCount("Attempts after it ended."),
      paused: outcomeCount("Attempts while an operator had it paused."),
      restoring: outcomeCount("Attempts while it was being restored after a store loss (503)."),
      limited: outcomeCount("Attempts over the per-user limit (ALREADY_PURCHASED, LIMIT_EXCEEDED)."),
      soldOut: outcomeCount("Attempts refused for lack of stock (410 or 409 INSUFFICIENT_STOCK)."),
    }),
  })
  .openapi("TimelinePoint") satisfies z.ZodType<TimelinePoint>;

/** `GET /api/admin/sales/{saleId}/timeline` (and the `timeline` event): the last five minutes. */
export const timelineSchema = z
  .strictObject({
    points: z.array(timelinePointSchema).openapi({ description: "Seconds with attempts, oldest first." }),
    serverTime: z.iso.datetime().openapi({ description: "The engine's clock when this was read." }),
  })
  .openapi("Timeline");

/** `POST /api/admin/sales/{saleId}/reconcile?full=1`: check every ledger entry and order, not one chunk. */
export const reconcileQuery = z.object({
  full: z.enum(["0", "1"]).optional().openapi({
    description: "`1`: a full run (every ledger entry and order), not the next chunk.",
    example: "1",
  }),
});

export const reconcileReportSchema = z
  .strictObject({
    saleId: z.string().openapi({ example: "s4k2x9q1m0abc" }),
    full: z
      .boolean()
      .openapi({ description: "A full run (`?full=1`): every ledger entry and order checked." }),
    checkedLedgerEntries: count("Redis ledger entries checked (a bounded chunk, unless full).", 125),
    checkedOrders: count(
      "Orders written since the last run's watermark, checked (a bounded chunk, unless full).",
      40,
    ),
    passComplete: z.boolean().openapi({
      description:
        "The walk through the ledger finished a pass in this run; the counters were then recounted.",
    }),
    republished: orderIds("Reservations without a Postgres order: their order write was published again."),
    recordedAdjustments: z.array(z.string()).openapi({
      description: "Stock adjustments Redis applied and Postgres had not recorded, now recorded.",
    }),
    ordersWithoutReservation: orderIds("Unpaid Postgres orders with no Redis reservation (reported)."),
    mismatched: z
      .array(
        z.strictObject({
          orderId: z.string(),
          ledger: z.strictObject({ userId: z.string().optional(), quantity: z.int().optional() }),
          db: z.strictObject({ userId: z.string(), quantity: z.int() }),
        }),
      )
      .openapi({ description: "Orders whose user or quantity differ between the stores (reported)." }),
    counters: z.strictObject({
      checked: z
        .boolean()
        .openapi({ description: "The stats' counters were recounted from the orders in this run." }),
      repaired: z
        .array(
          z.strictObject({
            counter: z.enum(COUNTER_FIELDS),
            was: z.int(),
            recounted: z.int(),
          }),
        )
        .openapi({
          description: "Counters that did not match the recount: what they said, what they now say.",
        }),
    }),
    drift: z.int().openapi({
      description: "Units by which stock differs from remaining + live + restoring, if it lasts (0: none).",
      example: 0,
    }),
    variants: z
      .array(
        z.strictObject({
          variantId: z.string().openapi({ example: "eu-42" }),
          drift: z.int().openapi({
            description: "Units by which the variant's stock differs from its remaining + live + restoring.",
            example: -2,
          }),
        }),
      )
      .openapi({
        description:
          "Variants of a drop whose Redis remaining disagrees with Postgres (their stock less their live units) in two readings a moment apart: reported, and the sale paused, never overwritten (a rebuild sets them again).",
      }),
    paused: z.boolean().openapi({
      description:
        "The sale was paused because of drift (of the sale or of a variant) or users over a limit.",
    }),
    trimmed: count("Ledger entries of finished orders removed.", 0),
    stats: saleStatsSchema,
  })
  .openapi("ReconcileReport") satisfies z.ZodType<ReconcileReport>;

export const rebuildReportSchema = z
  .strictObject({
    saleId: z.string().openapi({ example: "s4k2x9q1m0abc" }),
    epoch: z.int().min(1).openapi({ description: "The sale's new generation.", example: 2 }),
    stock: count("Units for sale: initial stock plus adjustments.", 1000),
    liveOrders: count("Live orders counted from Postgres.", 110),
    liveUnits: count("Their units.", 115),
    keptOrders: count("Reservations the old Redis held that Postgres had not counted: kept.", 0),
    keptAdjustments: count(
      "Stock adjustments the old Redis had applied that Postgres had not recorded: kept, counted in `stock`, recorded.",
      0,
    ),
    remaining: z.int().openapi({ description: "Units not reserved after the rebuild.", example: 885 }),
    pausedUntil: z.iso.datetime().openapi({
      description: "Buying waits until then, so order writes still in flight are counted first.",
    }),
  })
  .openapi("RebuildReport") satisfies z.ZodType<RebuildReport>;

const nullableText = (description: string) => z.string().nullable().openapi({ description });

/** `GET /api/admin/dead-letters`: the jobs QStash gave up on, newest first (at most 100). */
export const deadLettersSchema = z
  .strictObject({
    deadLetters: z.array(
      z
        .strictObject({
          id: z.int().min(1),
          messageId: z.string().openapi({ description: "QStash's message id." }),
          url: z.string().openapi({ description: "The job route it was for." }),
          status: z.int().nullable().openapi({ description: "The last HTTP status the route answered." }),
          body: nullableText("The job's body."),
          responseBody: nullableText("The route's last answer."),
          at: z.iso.datetime().openapi({ description: "When QStash reported the failure." }),
        })
        .openapi("DeadLetter"),
    ),
  })
  .openapi("DeadLetters");
