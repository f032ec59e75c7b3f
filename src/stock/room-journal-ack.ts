import roomJournalAckLua from "../../lua/room-journal-ack.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { saleKeys } from "./keys";
import type { JournalPage } from "./room-journal";
import { defineScript, runScript } from "./script";

export const roomJournalAckScript = defineScript(
  "room-journal-ack",
  roomJournalAckLua,
  "d47c2a5b028166c55caf403028077b1480da7eea",
);

/**
 * Forgets the members of a page now in Postgres, each unless it changed since it was read
 * (room-journal-ack.lua).
 */
export async function acknowledgeRoomJournal(redis: Redis, saleId: string, page: JournalPage): Promise<void> {
  const args: string[] = [];
  if (page.room) args.push("r", page.room.fields.v ?? "");
  if (page.entries !== null) args.push("e", "");
  for (const { userId, ticket } of page.tickets)
    args.push(`t:${userId}`, ticket?.v === undefined ? "" : String(ticket.v));
  if (args.length === 0) return;
  const k = saleKeys(saleId);
  await withRedis(() => runScript(redis, roomJournalAckScript, [k.room, k.tickets, k.journal], args));
}
