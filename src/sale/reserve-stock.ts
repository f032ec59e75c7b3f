import type { Redis } from "@upstash/redis/cloudflare";
import { withRedis } from "../redis";
import { type ReserveLimits, type ReserveRequest, reserveScriptCall } from "./reserve-call";
import { decodeReserveReply, type ReserveOutcome } from "./reserve-outcome";
import { runScript } from "./scripts";

/**
 * One buy attempt: rate limits, window, allowance, stock, ledger and outbox in one EVALSHA (one Redis
 * round trip). A network retry of the same call is a replay (same order id), never a second reservation.
 */
export async function reserveStock(
  redis: Redis,
  req: ReserveRequest,
  limits: ReserveLimits,
): Promise<ReserveOutcome> {
  const { keys, args } = reserveScriptCall(req, limits);
  const reply = await withRedis(() => runScript(redis, "reserveStock", keys, args));
  return decodeReserveReply(reply);
}
