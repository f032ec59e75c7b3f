import { admissionModeOf } from "../admission/admission-mode";
import { readAdmission } from "../admission/admission-token";
import { CatalogMissingError, resolveProductToken } from "../catalog/catalog";
import { StoreUnavailableError } from "../errors";
import { newOrderId } from "../ids";
import { publishSoon } from "../orders/publish-buffer";
import { recoverLostSales } from "../recovery/recover-sales";
import type { Deps } from "../services";
import { type ReserveOutcome, reserveStock } from "../stock/reserve";
import type { VoidRequest } from "../stock/void";
import { storeNow } from "../stores/store-clock";
import { countSoldOutFromMemory } from "./sold-out-answers";
import { resolveUnanswered } from "./void-attempt";

/** One buy attempt as the route read it: who, what, how many, and the client's address. */
export type BuyInput = {
  productToken: string;
  userId: string;
  quantity: number;
  idempotencyKey: string | null;
  /** the client's address as the platform gives it (CF-Connecting-IP, or the socket's) */
  clientIp: string | undefined;
  /** the `Admission` header (queue and draw sales) */
  admission?: string | null;
};

/** What an attempt came to: units reserved (the order is on its way to Postgres), or why not. */
export type BuyOutcome =
  | { kind: "accepted"; orderId: string; quantity: number; expiresAt: number }
  | { kind: "unknown_product" }
  /** a queue or draw sale, and no valid admission for this shopper and sale */
  | { kind: "not_admitted" }
  | Exclude<ReserveOutcome, { kind: "reserved" }>;

type Reserved = Extract<ReserveOutcome, { kind: "reserved" }>;

/**
 * The buy decision, in one place: the product token through the catalog (a token not in the Bloom
 * filter costs no Redis command), a queue or draw sale's admission (403 without a command), the
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
  const saleId = await resolveProductToken(d, input.productToken, {
    now: d.now,
    refreshMs: config.CATALOG_REFRESH_MS,
  }).catch((error) => {
    if (error instanceof CatalogMissingError) d.defer(recoverLostSales(d));
    throw error;
  });
  if (!saleId) return { kind: "unknown_product" };
  const now = await storeNow(d, { refreshMs: config.STORE_CLOCK_REFRESH_MS });
  const { userId, idempotencyKey } = input;
  let admittedUnits: number | undefined;
  if ((await admissionModeOf(d, saleId)) !== "open") {
    const admission = await readAdmission(config, input.admission, { saleId, userId, now });
    // a keyed retry under an admission of theirs that lapsed may still be owed its first answer (a 202
    // lost on the way): the script gives that back, or NOT_ADMITTED, changing nothing; anything else
    // is refused here, without a store command
    if (admission.kind === "admitted") admittedUnits = admission.admission.units;
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
    quantity: input.quantity,
    idempotencyKey,
  };
  const outcome = await reserveOrVoid(d, attempt, { ip: clientIp(input.clientIp), now, admittedUnits });
  remember(d, saleId, now, outcome, keyed);
  if (outcome.kind === "not_initialised") d.defer(recoverLostSales(d));
  if (outcome.kind !== "reserved") return outcome;
  // a replay whose order is still in the outbox may be the only copy of it (its first publish lost)
  if (!outcome.replay || outcome.pending) {
    const { orderId, quantity, expiresAt, epoch } = outcome;
    d.defer(publishSoon(d, { orderId, saleId, userId, quantity, createdAt: now, expiresAt, epoch }));
  }
  return {
    kind: "accepted",
    orderId: outcome.orderId,
    quantity: outcome.quantity,
    expiresAt: outcome.expiresAt,
  };
}

/**
 * The reservation, its unknown outcome resolved: when no run was answered within the resolve window,
 * the attempt is voided here (answered `voided`: nothing reserved), or found claimed by a keyed retry
 * that was told its order (answered as that replay).
 */
async function reserveOrVoid(
  d: Deps,
  attempt: VoidRequest,
  at: { ip: string; now: number; admittedUnits?: number },
): Promise<ReserveOutcome> {
  const { config } = d;
  const limits = {
    userPerWindow: config.RATE_LIMIT_USER_PER_WINDOW,
    ipPerWindow: config.RATE_LIMIT_IP_PER_WINDOW,
    windowMs: config.RATE_LIMIT_WINDOW_SECONDS * 1000,
  };
  try {
    return await reserveStock(
      d.redis,
      { ...attempt, ...at },
      limits,
      undefined,
      config.BUY_RESOLVE_WINDOW_MS,
    );
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    const settled = await resolveUnanswered(d, attempt);
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

/** What the answer teaches the sold-out memory (a replay says nothing about the stock now). */
function remember(
  d: Deps,
  saleId: string,
  now: number,
  outcome: ReserveOutcome,
  keyed: { userId: string; idempotencyKey: string } | undefined,
): void {
  const soldOut = d.memory.soldOut;
  const ttlMs = d.config.SOLD_OUT_CACHE_MS;
  if (outcome.kind === "sold_out") {
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
