import { CatalogMissingError, noticeCatalogLoss, resolveProductToken } from "../catalog/catalog";
import { StoreUnavailableError } from "../errors";
import { newOrderId } from "../ids";
import { publishSoon } from "../orders/publish-buffer";
import { readQueuedOrder } from "../orders/queued-order-store";
import { recoverLostSales } from "../recovery/recover-sales";
import { admissionModeOf } from "../room/admission-mode";
import { readAdmission } from "../room/admission-token";
import { movedAdmission } from "../room/moved-admission";
import type { Deps } from "../services";
import { type ReserveLine, type ReserveOutcome, reserveStock } from "../stock/reserve";
import type { VoidRequest } from "../stock/void";
import { storeNow } from "../stores/store-clock";
import { type CartRequest, checkCart, variantsOf } from "./cart";
import { countSoldOutFromMemory } from "./sold-out-answers";
import { resolveUnanswered } from "./void-attempt";

/** One buy attempt as the route read it: who, what, how many, and the client's address. */
export type BuyInput = {
  productToken: string;
  userId: string;
  /** units of a one-variant sale, or the cart's lines */
  cart: CartRequest;
  idempotencyKey: string | null;
  /** the client as per-address counts key it (src/limits/client-key.ts: an IPv6 client by its /64) */
  clientIp: string | undefined;
  /** the `Admission` header (queue and draw sales) */
  admission?: string | null;
};

/** What an attempt came to: units reserved (the order is on its way to Postgres), or why not. */
export type BuyOutcome =
  /** `replay`: the first answer to the same Idempotency-Key, given again (its units were counted then) */
  | { kind: "accepted"; orderId: string; quantity: number; expiresAt: number; replay: boolean }
  | { kind: "unknown_product" }
  /** a line names a variant the sale does not have */
  | { kind: "unknown_variant"; variantId: string }
  /** a bare quantity on a sale of several variants */
  | { kind: "variant_required" }
  /** a queue or draw sale, and no valid admission for this shopper and sale */
  | { kind: "not_admitted" }
  | Exclude<ReserveOutcome, { kind: "reserved" }>;

type Reserved = Extract<ReserveOutcome, { kind: "reserved" }>;

/**
 * The buy decision, in one place: the product token through the catalog (a token not in the Bloom
 * filter costs no Redis command), a queue or draw sale's admission (403 without a command, but for a
 * token of theirs past its end: one read, its end may have moved with a pause), the
 * process's sold-out memory (410 without a command; not for an admitted buy, whose units are held), then one
 * reservation script for rate limits, window, allowance and stock. A reservation whose outcome stays
 * unknown for the whole resolve window is voided before the answer (a 503 means nothing was reserved);
 * a sale Redis lost starts a recovery; an admitted order is handed to the publish buffer.
 *
 * @example
 * const outcome = await attemptPurchase(deps(c), { productToken, userId, quantity: 1, idempotencyKey: null, clientIp });
 * if (outcome.kind !== "accepted") throw refusal(outcome); // the route's one table
 */
export async function attemptPurchase(d: Deps, input: BuyInput): Promise<BuyOutcome> {
  const { config, memory } = d;
  const answerBy = Date.now() + config.BUY_RESOLVE_WINDOW_MS;
  const saleId = await resolveProductToken(d, input.productToken, {
    now: d.now,
    refreshMs: config.CATALOG_REFRESH_MS,
  }).catch((error) => {
    if (error instanceof CatalogMissingError) d.defer(recoverLostSales(d));
    throw error;
  });
  if (!saleId) return { kind: "unknown_product" };
  const variants = await variantsOf(d, saleId);
  // a sale Redis does not hold (lost, being rebuilt): its lines cannot be checked; 503, and a recovery
  if (variants.length === 0) {
    noticeCatalogLoss(memory.catalog);
    d.defer(recoverLostSales(d));
    return { kind: "not_initialised" };
  }
  const checked = checkCart(variants, input.cart);
  if (checked.kind !== "cart") return checked;
  const { cart } = checked;
  const now = await storeNow(d, { refreshMs: config.STORE_CLOCK_REFRESH_MS });
  const { userId, idempotencyKey } = input;
  let admittedUnits: number | undefined;
  if ((await admissionModeOf(d, saleId)) !== "open") {
    const admission = await readAdmission(config, input.admission, { saleId, userId, now });
    // a token of theirs past its end: a pause (or a rebuild's quiet period) may have moved the end
    const moved =
      admission.kind === "lapsed"
        ? await movedAdmission(d, { saleId, userId, ticketId: admission.ticketId, now })
        : null;
    // a keyed retry under an admission of theirs that lapsed may still be owed its first answer (a 202
    // lost on the way): the script gives that back, or NOT_ADMITTED, changing nothing; anything else
    // is refused here, without a store command
    if (admission.kind === "admitted") admittedUnits = admission.admission.units;
    else if (moved !== null) admittedUnits = moved;
    else if (admission.kind === "lapsed" && idempotencyKey !== null) admittedUnits = -1;
    else return { kind: "not_admitted" };
  }
  const keyed = idempotencyKey === null ? undefined : { userId, idempotencyKey };
  // an admission holds its units: a sale remembered sold out (maybe before a unit of theirs came back,
  // which another process saw) says nothing about them
  if (admittedUnits === undefined && memory.soldOut.has(saleId, now, keyed)) {
    countSoldOutFromMemory(d, saleId, now);
    return { kind: "sold_out" };
  }
  const attempt: VoidRequest = {
    saleId,
    orderId: newOrderId(saleId),
    userId,
    quantity: cart.quantity,
    idempotencyKey,
  };
  const at = {
    ip: clientIp(input.clientIp),
    now,
    admittedUnits,
    lines: cart.lines,
    perVariant: cart.perVariant,
  };
  const outcome = await reserveOrVoid(d, attempt, at, answerBy);
  remember(d, saleId, now, outcome, keyed, cart.perVariant);
  if (outcome.kind === "not_initialised") {
    noticeCatalogLoss(memory.catalog);
    d.defer(recoverLostSales(d));
  }
  if (outcome.kind !== "reserved") return outcome;
  if (!outcome.replay) {
    const { orderId, quantity, expiresAt, epoch } = outcome;
    const items = cart.lines.map(({ variantId, quantity, priceCents }) => ({
      variantId,
      quantity,
      priceCents,
    }));
    d.defer(publishSoon(d, { orderId, saleId, userId, quantity, createdAt: now, expiresAt, epoch, items }));
  } else if (outcome.pending) {
    // a replay whose order is still in the outbox may be the only copy of it (its first publish lost):
    // published as Redis reserved it, never as this request asks (a keyed retry may send another cart)
    d.defer(republishQueued(d, saleId, outcome.orderId));
  }
  return {
    kind: "accepted",
    orderId: outcome.orderId,
    quantity: outcome.quantity,
    expiresAt: outcome.expiresAt,
    replay: outcome.replay,
  };
}

/** Publishes a queued order again from its document in Redis (gone: the pipeline has it already). */
async function republishQueued(d: Deps, saleId: string, orderId: string): Promise<void> {
  const queued = await readQueuedOrder(d.redis, saleId, orderId);
  if (queued) await publishSoon(d, queued);
}

/**
 * The reservation, its unknown outcome resolved by `answerBy` (the buy's start plus the resolve window):
 * runs until the void's share of the window ({@link voidShareMs}), then, when no run was answered, the
 * attempt is voided here (answered `voided`: nothing reserved), or found claimed by a keyed retry that
 * was told its order (answered as that replay).
 */
async function reserveOrVoid(
  d: Deps,
  attempt: VoidRequest,
  at: { ip: string; now: number; admittedUnits?: number; lines?: ReserveLine[]; perVariant?: boolean },
  answerBy: number,
): Promise<ReserveOutcome> {
  const { config } = d;
  const reserveBy = answerBy - voidShareMs(config.BUY_RESOLVE_WINDOW_MS);
  const limits = {
    userPerWindow: config.RATE_LIMIT_USER_PER_WINDOW,
    ipPerWindow: config.RATE_LIMIT_IP_PER_WINDOW,
    windowMs: config.RATE_LIMIT_WINDOW_SECONDS * 1000,
  };
  const windowMs = Math.max(reserveBy - Date.now(), FIRST_RUN_MS);
  // the void keeps its whole share even when the steps before the script (a slow catalog or clock read)
  // used the window up: a 503 must never stand in front of a reservation it did not undo
  const voidBy = Math.max(answerBy, Date.now() + windowMs + voidShareMs(config.BUY_RESOLVE_WINDOW_MS));
  try {
    return await reserveStock(d.redis, { ...attempt, ...at }, limits, undefined, windowMs);
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    const settled = await resolveUnanswered(d, attempt, { answerBy: voidBy, defer: d.defer });
    if (settled.kind === "voided") return settled;
    return {
      kind: "reserved",
      ...settled.order,
      remaining: 0,
      replay: true,
      pending: false,
    } satisfies Reserved;
  }
}

/**
 * The end of a buy's resolve window kept for voiding an unanswered attempt and handing the void to
 * QStash: one store call's time (2 s) and the handoff's, at most a third of the window.
 */
function voidShareMs(windowMs: number): number {
  return Math.min(VOID_SHARE_MS, Math.floor(windowMs / 3));
}
const VOID_SHARE_MS = 2_500;
/** The least time the reservation's first run is given, however long the steps before it took. */
const FIRST_RUN_MS = 250;

/**
 * What the answer teaches the sold-out memory (a replay says nothing about the stock now). For a drop of
 * several variants a 410 says only that the cart's variants are gone: the sale is sold out when its
 * total is (a reservation that took the last unit says so).
 */
function remember(
  d: Deps,
  saleId: string,
  now: number,
  outcome: ReserveOutcome,
  keyed: { userId: string; idempotencyKey: string } | undefined,
  perVariant: boolean,
): void {
  const soldOut = d.memory.soldOut;
  const ttlMs = d.config.SOLD_OUT_CACHE_MS;
  if (outcome.kind === "sold_out" && !perVariant) {
    // a replayed 410 is the key's first answer, not news: the units may have come back since
    if (!outcome.replay) soldOut.mark(saleId, now, ttlMs);
    if (keyed) soldOut.rememberKey(saleId, keyed.userId, keyed.idempotencyKey);
  }
  if (outcome.kind === "insufficient_stock") soldOut.clear(saleId);
  if (outcome.kind === "reserved" && !outcome.replay) {
    if (outcome.remaining === 0) soldOut.mark(saleId, now, ttlMs);
    else soldOut.clear(saleId);
  }
}

/** The client address for per-IP limits: the platform's, or "unknown" when it gives none usable. */
export function clientIp(header: string | undefined): string {
  const ip = header?.trim();
  return ip && ip.length <= 64 ? ip : "unknown";
}
