import type { SaleRecord } from "../catalog/sale-record";
import { isLostSale, noticeIfLost, readSale, readSaleList } from "../catalog/sale-store";
import { SaleLostError } from "../errors";
import type { Deps } from "../services";
import { saleKeys } from "../stock/keys";
import { storeNow } from "../stores/store-clock";
import { withRedis } from "../stores/with-redis";
import { solvesJoinChallenge } from "./challenge";
import { stepRoom } from "./room";
import { type TicketView, ticketView } from "./ticket-view";

/** What a join or a ticket read came to. */
export type TicketOutcome =
  | { kind: "ticket"; ticket: TicketView }
  | { kind: "unknown_sale" }
  | { kind: "no_queue" }
  | { kind: "challenge_failed" }
  | { kind: "no_ticket" }
  | { kind: "ended" }
  | { kind: "entries_closed" }
  | { kind: "not_initialised" };

/**
 * A sale by id: from the process's sale list, else one read (a sale made moments ago elsewhere); a sale
 * the catalog lists and Redis lost throws {@link SaleLostError} (503 while it is rebuilt).
 */
export async function findSale(d: Deps, saleId: string, now: number): Promise<SaleRecord | null> {
  const listed = (await readSaleList(d, now)).find((s) => s.saleId === saleId);
  const sale = listed ?? (await readSale(d.redis, saleId));
  // listed in the catalog, lost with its store: being rebuilt (503), not unknown
  if (!sale) {
    await noticeIfLost(d, saleId);
    if (isLostSale(d.memory, saleId)) throw new SaleLostError(saleId);
  }
  return sale;
}

/** The store's clock, as the buy and the room read it. */
export function roomNow(d: Deps): Promise<number> {
  return storeNow(d, { refreshMs: d.config.STORE_CLOCK_REFRESH_MS });
}

/**
 * A shopper joins a sale's waiting room, once (again: the same ticket). A sale asking for a proof of
 * work checks the solution first, in memory: a missing or wrong one is refused before any store
 * command, even for a shopper who holds a ticket (who reads it with `GET …/queue/me`, or joins again
 * with a new solution); then one script call joins and steps the room.
 */
export async function joinRoom(
  d: Deps,
  at: { saleId: string; userId: string; challenge: unknown },
): Promise<TicketOutcome> {
  const now = await roomNow(d);
  const sale = await findSale(d, at.saleId, now);
  if (!sale) return { kind: "unknown_sale" };
  if ((sale.admission ?? "open") === "open") return { kind: "no_queue" };
  if (sale.proofOfWork && !(await solvesJoinChallenge(d.config, at.challenge, at)))
    return { kind: "challenge_failed" };
  return stepFor(d, sale, now, at.userId, true);
}

/** A shopper's ticket, the room stepped on the way (returned units are offered at every look). */
export async function readTicket(d: Deps, at: { saleId: string; userId: string }): Promise<TicketOutcome> {
  const now = await roomNow(d);
  const sale = await findSale(d, at.saleId, now);
  if (!sale) return { kind: "unknown_sale" };
  if ((sale.admission ?? "open") === "open") return { kind: "no_ticket" };
  return stepFor(d, sale, now, at.userId, false);
}

async function stepFor(
  d: Deps,
  sale: SaleRecord,
  now: number,
  userId: string,
  join: boolean,
): Promise<TicketOutcome> {
  const outcome = await stepRoom(d, sale, now, { join: join ? userId : "", read: userId });
  if (outcome.kind !== "stepped") return outcome;
  if (!outcome.ticket) return { kind: "no_ticket" };
  const ticket = await ticketView(d.config, { t: outcome.ticket, room: outcome.room, sale, userId, now });
  return { kind: "ticket", ticket };
}

/** Tickets taken so far (the challenge's difficulty follows it): one HGET. */
export async function roomDepth(d: Deps, saleId: string): Promise<number> {
  const count = await withRedis(() => d.redis.hget<string>(saleKeys(saleId).room, "count"));
  return Number(count ?? 0);
}
