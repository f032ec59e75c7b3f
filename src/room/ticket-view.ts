import type { SaleRecord } from "../catalog/sale-record";
import type { Config } from "../env";
import type { RoomState, StoredTicket } from "../stock/room-step";
import { signAdmission } from "./admission-token";

export type Verdict = "will_get" | "may_get" | "will_not_get" | "admitted" | "lapsed";

/** The contract's `Ticket`. */
export type TicketView = {
  ticketId: string;
  saleId: string;
  position: number;
  frontier: number;
  verdict: Verdict;
  estimatedWaitSeconds: number;
  admission?: { token: string; expiresAt: string };
};

/**
 * The verdict, from the ticket and the room alone (no read per waiter):
 * - admitted while its admission runs (an operator's pause stops its clock: admitted while the pause
 *   that began before its end runs), lapsed after (or when its hold was given up);
 * - after the sale's end, or past the room's cutoff (no position past it is ever admitted): will_not_get;
 * - within the tickets the free units cover at the next step (ceil(free / perUserLimit) past the
 *   frontier): will_get;
 * - else may_get (before the seal every position is still to be drawn).
 */
export function verdictOf(t: StoredTicket, room: RoomState, sale: SaleRecord, now: number): Verdict {
  if (t.s === "a") return admissionRuns(t, room, now) ? "admitted" : "lapsed";
  if (t.s === "l") return "lapsed";
  if (now >= sale.endsAt) return "will_not_get";
  if (!room.sealed || t.p === 0) return "may_get";
  if (room.cutoff !== null && t.p > room.cutoff) return "will_not_get";
  const covered = Math.ceil(Math.max(0, room.free) / Math.max(1, sale.perUserLimit));
  return t.p - room.frontier <= covered ? "will_get" : "may_get";
}

/** An admission runs until its end, and while an operator's pause that began before its end runs. */
export function admissionRuns(t: StoredTicket, room: Pick<RoomState, "pausedAt">, now: number): boolean {
  return now < t.x || (room.pausedAt !== null && t.x > room.pausedAt);
}

/**
 * The wait: until the start before it; none once decided; for may_get, an admission window for each
 * round of the holds now out it takes for units to come back to its place.
 */
function waitSeconds(
  t: StoredTicket,
  room: RoomState,
  sale: SaleRecord,
  now: number,
  verdict: Verdict,
  windowMs: number,
) {
  if (now < sale.startsAt) return Math.ceil((sale.startsAt - now) / 1000);
  if (verdict !== "may_get") return 0;
  const ahead = Math.max(1, t.p - room.frontier);
  return Math.ceil(ahead / Math.max(1, room.held)) * Math.ceil(windowMs / 1000);
}

/** The `Ticket` a shopper sees, with its signed admission while admitted. */
export async function ticketView(
  config: Pick<Config, "ADMISSION_SECRET" | "JWT_SECRET" | "ADMISSION_WINDOW_SECONDS">,
  at: { t: StoredTicket; room: RoomState; sale: SaleRecord; userId: string; now: number },
): Promise<TicketView> {
  const { t, room, sale, now } = at;
  const verdict = verdictOf(t, room, sale, now);
  const view: TicketView = {
    ticketId: t.id,
    saleId: sale.saleId,
    position: t.p > 0 ? t.p : t.n,
    frontier: room.frontier,
    verdict,
    estimatedWaitSeconds: waitSeconds(t, room, sale, now, verdict, config.ADMISSION_WINDOW_SECONDS * 1000),
  };
  if (verdict === "admitted") {
    const admission = { saleId: sale.saleId, userId: at.userId, ticketId: t.id, units: t.h, expiresAt: t.x };
    view.admission = {
      token: await signAdmission(config, admission),
      expiresAt: new Date(t.x).toISOString(),
    };
  }
  return view;
}
