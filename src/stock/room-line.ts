import roomLineLua from "../../lua/room-line.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf, type ScriptReply } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const roomLineScript = defineScript(
  "room-line",
  roomLineLua,
  "7572cc407253f28836be0947e35083214e08af40",
);

/** The line before the seal: the room's seed, and each user who joined before the start with its ticket id. */
export type LineBeforeSeal = { seed: string; entries: { userId: string; ticketId: string }[] };

/** Reads the line to rank (room-line.lua); null once it is sealed. */
export async function readLineBeforeSeal(redis: Redis, saleId: string): Promise<LineBeforeSeal | null> {
  const k = saleKeys(saleId);
  const reply = await withRedis(() =>
    runScript<ScriptReply>(redis, roomLineScript, [k.room, k.tickets, k.line], []),
  );
  if (codeOf("room-line", reply, ["OK", "ALREADY_EXISTS"] as const) === "ALREADY_EXISTS") return null;
  const n = Number(reply[2]);
  const users = reply.slice(3, 3 + n).map(String);
  const ids = reply.slice(3 + n, 3 + 2 * n).map(String);
  return { seed: String(reply[1]), entries: users.map((userId, i) => ({ userId, ticketId: ids[i] ?? "" })) };
}
