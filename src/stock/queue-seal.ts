import queueSealLua from "../../lua/queue-seal.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const queueSealScript = defineScript(
  "queue-seal",
  queueSealLua,
  "044c7c9384076989062a269706315f6796239afa",
);

export type SealOutcome = "sealed" | "already_sealed" | "line_changed";

const CODES = ["OK", "ALREADY_EXISTS", "STALE"] as const;

/**
 * Seals the room's line (queue-seal.lua): the tickets taken before the start in `ranked` order, then
 * the later ones as they came; `line_changed` when a ticket joined since the caller read the line.
 */
export async function sealQueue(
  redis: Redis,
  saleId: string,
  at: { now: number; entriesHash: string; entries: string[]; ranked: string[] },
): Promise<SealOutcome> {
  const k = saleKeys(saleId);
  const keys = [k.room, k.tickets, k.line, k.late, k.entries];
  const args = [at.now, at.entriesHash, JSON.stringify(at.entries), ...at.ranked];
  const reply = await withRedis(() => runScript(redis, queueSealScript, keys, args));
  switch (codeOf("queue-seal", reply, CODES)) {
    case "OK":
      return "sealed";
    case "ALREADY_EXISTS":
      return "already_sealed";
    case "STALE":
      return "line_changed";
  }
}
