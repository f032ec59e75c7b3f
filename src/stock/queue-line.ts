import queueLineLua from "../../lua/queue-line.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf, type ScriptReply } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const queueLineScript = defineScript(
  "queue-line",
  queueLineLua,
  "f18c9b3010107df1d54b16aeaa6eafbcadbc3d98",
);

/** The line before the seal: the room's seed, and each user who joined before the start with its ticket id. */
export type LineBeforeSeal = { seed: string; entries: { userId: string; ticketId: string }[] };

/** Reads the line to rank (queue-line.lua); null once it is sealed. */
export async function readLineBeforeSeal(redis: Redis, saleId: string): Promise<LineBeforeSeal | null> {
  const k = saleKeys(saleId);
  const reply = await withRedis(() =>
    runScript<ScriptReply>(redis, queueLineScript, [k.room, k.tickets, k.line], []),
  );
  if (codeOf("queue-line", reply, ["OK", "ALREADY_EXISTS"] as const) === "ALREADY_EXISTS") return null;
  const n = Number(reply[2]);
  const users = reply.slice(3, 3 + n).map(String);
  const ids = reply.slice(3 + n, 3 + 2 * n).map(String);
  return { seed: String(reply[1]), entries: users.map((userId, i) => ({ userId, ticketId: ids[i] ?? "" })) };
}
