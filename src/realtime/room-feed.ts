import { type Frame, frameOf, keepSame } from "../memory/frame";
import type { RoomReading } from "../memory/memory";
import { untilRoomRecorded } from "../room/room-record";
import { tickRoom } from "../room/tick";
import { admissionRuns, ticketView } from "../room/ticket-view";
import { findSale, roomNow } from "../room/tickets";
import type { Deps } from "../services";
import { saleKeys } from "../stock/keys";
import type { StoredTicket } from "../stock/room-step";
import { withRedis } from "../stores/with-redis";

/**
 * The rooms the process's ticket streams watch, each stepped once per refresh (one script call and one
 * query of the paid units per room, whatever the number of waiters): the step promotes and lowers the
 * cutoff, and its answer is the room state every waiter's verdict is derived from.
 */
export async function stepRooms(d: Deps, saleIds: string[]): Promise<Map<string, RoomReading>> {
  const readings = new Map<string, RoomReading>();
  const now = await roomNow(d);
  for (const saleId of saleIds) {
    const sale = await findSale(d, saleId, now);
    if (!sale) continue;
    const outcome = await tickRoom(d, sale, now);
    if (outcome.kind === "stepped") readings.set(saleId, { room: outcome.room, at: now, sale });
  }
  return readings;
}

/**
 * One waiter's own ticket, read again (one HGET) only when the room passed it or sealed the line, and
 * shown only once its state is in the room's Postgres record (another process's step may have changed
 * it moments ago: src/room/room-record.ts). Null when it is not (yet), or Redis has none: the stream
 * keeps its last frame.
 */
export async function readOwnTicket(
  d: Deps,
  saleId: string,
  userId: string,
  room: { gen: number; recorded: number },
): Promise<StoredTicket | null> {
  const { gen, recorded } = room;
  const raw = await withRedis(() => d.redis.hget<string>(saleKeys(saleId).tickets, userId));
  if (!raw) return null;
  const t = JSON.parse(raw) as StoredTicket;
  return untilRoomRecorded(d, saleId, { seq: t.v ?? 0, gen, recorded }).then(
    () => t,
    () => null,
  );
}

/** Whether the waiter's copy of its ticket may be out of date for this room state. */
export function ticketStale(t: StoredTicket, r: RoomReading): boolean {
  if (t.s !== "w") return t.s === "a" && !admissionRuns(t, r.room, r.at);
  return (r.room.sealed && t.p === 0) || (t.p > 0 && t.p <= r.room.frontier);
}

/** The waiter's `ticket` event for this room state (a frame keeps its version while the ticket is the same). */
export async function ticketFrame(
  d: Deps,
  previous: Frame | undefined,
  at: { t: StoredTicket; reading: RoomReading; userId: string; now: number },
): Promise<Frame> {
  const { t, reading, userId, now } = at;
  const view = await ticketView(d.config, { t, room: reading.room, sale: reading.sale, userId, now });
  const data = JSON.stringify(view);
  return keepSame(previous, frameOf([{ event: "ticket", data, key: data }]));
}
