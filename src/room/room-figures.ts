import type { SaleRecord } from "../catalog/sale-record";
import type { Deps } from "../services";
import { saleKeys } from "../stock/keys";
import type { RoomState } from "../stock/room-step";
import { withRedis } from "../stores/with-redis";
import { tickRoom } from "./tick";
import { findSale, roomNow } from "./tickets";

/** What the operator sees of a room: its depth, the frontier, the cutoff and how many hold each verdict. */
export type RoomFigures = {
  admission: "queue" | "draw";
  tickets: number;
  sealed: boolean;
  frontier: number;
  cutoff: number | null;
  freeUnits: number;
  heldUnits: number;
  verdicts: { admitted: number; passed: number; will_get: number; may_get: number; will_not_get: number };
};

/**
 * The verdict counts from the room state alone, by the ticket view's rule (ticket-view.ts): the
 * waiting positions past the frontier split into will_get (covered by the free units), will_not_get
 * (past the cutoff, or all once the sale ended) and may_get between; `passed` are positions the frontier
 * went by that are not admitted now (lapsed, or admitted and done).
 */
export function roomFigures(
  room: RoomState,
  sale: SaleRecord,
  admittedNow: number,
  now: number,
): RoomFigures {
  const waiting = Math.max(0, room.length - room.frontier);
  const covered = Math.ceil(Math.max(0, room.free) / Math.max(1, sale.perUserLimit));
  const ended = now >= sale.endsAt;
  const beyond =
    ended || !room.sealed
      ? ended
        ? waiting
        : 0
      : room.cutoff === null
        ? 0
        : Math.max(0, room.length - Math.max(room.cutoff, room.frontier));
  const willGet = ended || !room.sealed ? 0 : Math.min(waiting - beyond, covered);
  return {
    admission: sale.admission === "draw" ? "draw" : "queue",
    tickets: room.length,
    sealed: room.sealed,
    frontier: room.frontier,
    cutoff: room.cutoff,
    freeUnits: Math.max(0, room.free),
    heldUnits: room.held,
    verdicts: {
      admitted: admittedNow,
      passed: Math.max(0, room.frontier - admittedNow),
      will_get: willGet,
      may_get: waiting - beyond - willGet,
      will_not_get: beyond,
    },
  };
}

export type FiguresOutcome =
  | { kind: "figures"; figures: RoomFigures }
  | { kind: "unknown_sale" }
  | { kind: "no_queue" };

/** A room's figures, stepped first with the paid units (as the feed's tick): one script call, one query, one ZRANGE. */
export async function readRoomFigures(d: Deps, saleId: string): Promise<FiguresOutcome> {
  const now = await roomNow(d);
  const sale = await findSale(d, saleId, now);
  if (!sale) return { kind: "unknown_sale" };
  if ((sale.admission ?? "open") === "open") return { kind: "no_queue" };
  const outcome = await tickRoom(d, sale, now);
  if (outcome.kind !== "stepped") return { kind: "no_queue" };
  // while a pause runs, the admissions running when it began still run (their ends move at the resume)
  const from = outcome.room.pausedAt === null ? now : Math.min(now, outcome.room.pausedAt + 1);
  const active = await withRedis(() =>
    d.redis.zrange(saleKeys(saleId).active, from, Number.MAX_SAFE_INTEGER, { byScore: true }),
  );
  return { kind: "figures", figures: roomFigures(outcome.room, sale, active.length, now) };
}
