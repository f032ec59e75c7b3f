import type { Deps } from "../services";
import { saleKeys } from "../stock/keys";
import type { StoredTicket } from "../stock/room-step";
import { withRedis } from "../stores/with-redis";
import { admissionRuns } from "./ticket-view";

/**
 * The units a token's admission holds as the room keeps it now, for a genuine token whose signed end
 * has passed: an operator's pause and a rebuild's quiet period are time out of a running admission, so
 * its end moves (set-sale-paused.lua, open-room.lua) past the one the token carries, and while a pause
 * runs it does not end at all. Null when the ticket's admission lapsed, or is not the token's. One
 * MULTI of three HGETs, asked only for a token of this shopper past its end: the buy of a token within
 * its end asks nothing.
 *
 * @example
 * const units = await movedAdmission(d, { saleId, userId, ticketId: lapsed.ticketId, now });
 */
export async function movedAdmission(
  d: Pick<Deps, "redis">,
  at: { saleId: string; userId: string; ticketId: string; now: number },
): Promise<number | null> {
  const k = saleKeys(at.saleId);
  const [raw, paused, pausedAt] = await withRedis(() =>
    d.redis
      .multi()
      .hget(k.tickets, at.userId)
      .hget(k.meta, "paused")
      .hget(k.room, "pausedAt")
      .exec<[unknown, unknown, unknown]>(),
  );
  if (raw === null || raw === undefined) return null;
  const t = (typeof raw === "string" ? JSON.parse(raw) : raw) as StoredTicket;
  const room = { pausedAt: String(paused) === "1" && pausedAt !== null ? Number(pausedAt) : null };
  if (t.s !== "a" || t.id !== at.ticketId || !admissionRuns(t, room, at.now)) return null;
  return t.h;
}
