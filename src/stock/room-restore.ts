import roomRestoreLua from "../../lua/room-restore.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf, type ScriptReply } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const roomRestoreScript = defineScript(
  "room-restore",
  roomRestoreLua,
  "319b0b87da0d0f06ec58226d18a0c3a76c80dbb2",
);

/** A room as its Postgres record gives it back: the room hash's fields, and its keys' contents. */
export type RestoredRoom = {
  fields: Record<string, string>;
  entries: string[] | null;
  tickets: [userId: string, ticket: string][];
  line: string[];
  late: string[];
  active: [userId: string, expiresAt: number][];
};

/** How many tickets (or list items) one staging command carries. */
const CHUNK = 1_000;

/**
 * Gives a lost room back (room-restore.lua): staged in chunks under keys of this call's own, then put in
 * place in one script, only if the room has no seed (lost), or, with `replaceGen`, is still in that life
 * (a room found behind its record). When it is not, nothing changed: the life
 * (`gen`) of the room it has is answered.
 */
export async function restoreRoomState(
  redis: Redis,
  saleId: string,
  nonce: string,
  room: RestoredRoom,
  replaceGen?: number,
): Promise<{ kind: "restored" } | { kind: "kept"; gen: number }> {
  const k = saleKeys(saleId);
  const staged = k.staged(nonce);
  const stage = async (key: string, fields: Record<string, string>) => {
    await withRedis(() => redis.pipeline().hset(key, fields).expire(key, 600).exec());
  };
  for (let i = 0; i < room.tickets.length; i += CHUNK)
    await stage(staged.tickets, Object.fromEntries(room.tickets.slice(i, i + CHUNK)));
  for (const [name, items] of [
    ["line", room.line],
    ["late", room.late],
  ] as const)
    for (let i = 0; i * CHUNK < items.length; i++)
      await stage(staged.lists, {
        [`${name}:${i}`]: JSON.stringify(items.slice(i * CHUNK, (i + 1) * CHUNK)),
      });
  const keys = [
    k.room,
    k.tickets,
    k.line,
    k.late,
    k.active,
    k.entries,
    k.journal,
    staged.tickets,
    staged.lists,
  ];
  const args = [
    JSON.stringify(room.fields),
    room.entries ? JSON.stringify(room.entries) : "",
    JSON.stringify(room.active),
    replaceGen === undefined ? "" : String(replaceGen),
  ];
  const reply = await withRedis(() => runScript<ScriptReply>(redis, roomRestoreScript, keys, args));
  return codeOf("room-restore", reply, ["OK", "ALREADY_EXISTS"] as const) === "OK"
    ? { kind: "restored" }
    : { kind: "kept", gen: Number(reply[1]) };
}
