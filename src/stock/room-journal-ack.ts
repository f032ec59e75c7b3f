import roomJournalAckLua from "../../lua/room-journal-ack.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { saleKeys } from "./keys";
import type { JournalPage } from "./room-journal";
import { defineScript, runScript } from "./script";

export const roomJournalAckScript = defineScript(
  "room-journal-ack",
  roomJournalAckLua,
  "f0193594820bd7df3c4c9f09529ddf12c6e95d2e",
);

/**
 * Forgets the members of a page now in Postgres, each unless it changed since it was read, and raises
 * the room's `recorded` to the page's position (room-journal-ack.lua).
 */
export async function acknowledgeRoomJournal(redis: Redis, saleId: string, page: JournalPage): Promise<void> {
  const args: string[] = [String(page.through)];
  if (page.room) args.push("r", page.room.fields.v ?? "");
  if (page.entries !== null) args.push("e", "");
  for (const { userId, ticket } of page.tickets)
    args.push(`t:${userId}`, ticket?.v === undefined ? "" : String(ticket.v));
  if (args.length === 1) return;
  const k = saleKeys(saleId);
  await withRedis(() => runScript(redis, roomJournalAckScript, [k.room, k.tickets, k.journal], args));
}
