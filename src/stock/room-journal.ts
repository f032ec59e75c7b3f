import roomJournalLua from "../../lua/room-journal.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf, type ScriptReply } from "./codes";
import { saleKeys } from "./keys";
import type { StoredTicket } from "./room-step";
import { defineScript, runScript } from "./script";

export const roomJournalScript = defineScript(
  "room-journal",
  roomJournalLua,
  "970d3e7a05706b32fbdc34c77e3d0b9056c621c5",
);

/** The room's fields a rebuild gives back (room-step.lua's, as Redis held them: strings, absent when unset). */
export type DurableRoomFields = {
  v?: string;
  frontier?: string;
  cutoff?: string;
  sealed?: string;
  drawnAt?: string;
  entriesHash?: string;
  quietUntil?: string;
  pausedAt?: string;
  pausedVersion?: string;
};

/** The oldest part of a room's journal, as room-journal.lua read it in one instant. */
export type JournalPage = {
  /** every change at or below this journal position is in this page */
  through: number;
  /** the room's durable fields, when the page holds the whole journal and they changed */
  room: { fields: DurableRoomFields } | null;
  /** the seal's entry list (JSON), once, when the page holds it */
  entries: string | null;
  seed: string;
  seedHash: string;
  /** the room's life it was read in (src/room/room-record.ts: a page of an earlier life is not written) */
  gen: number;
  /** the journal's position when the page was read */
  seq: number;
  /** each changed ticket with its state now (null: the user has none) */
  tickets: { userId: string; ticket: StoredTicket | null }[];
};

/** Reads at most `limit` members of the room's journal, oldest first (room-journal.lua); null: the room is lost. */
export async function readRoomJournal(
  redis: Redis,
  saleId: string,
  limit: number,
): Promise<JournalPage | null> {
  const k = saleKeys(saleId);
  const reply = await withRedis(() =>
    runScript<ScriptReply>(redis, roomJournalScript, [k.room, k.tickets, k.journal, k.entries], [limit]),
  );
  if (codeOf("room-journal", reply, ["OK", "NOT_INITIALISED"] as const) === "NOT_INITIALISED") return null;
  const tickets: JournalPage["tickets"] = [];
  for (let i = 8; i + 1 < reply.length; i += 2) {
    const text = String(reply[i + 1]);
    tickets.push({ userId: String(reply[i]), ticket: text ? (JSON.parse(text) as StoredTicket) : null });
  }
  return {
    through: Number(reply[1]),
    room: decodeRoom(String(reply[2])),
    seed: String(reply[3]),
    seedHash: String(reply[4]),
    entries: reply[5] ? String(reply[5]) : null,
    gen: Number(reply[6]),
    seq: Number(reply[7]),
    tickets,
  };
}

function decodeRoom(text: string): JournalPage["room"] {
  if (!text) return null;
  const raw = JSON.parse(text) as Record<string, string | false>;
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) if (typeof value === "string") fields[name] = value;
  return { fields };
}
