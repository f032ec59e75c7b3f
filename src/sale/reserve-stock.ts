import type { Redis } from "@upstash/redis/cloudflare";
import { withRedis } from "../redis";
import { saleKeys } from "./keys";
import { decodeReserveReply, type ReserveOutcome } from "./reserve-outcome";
import { runScript } from "./scripts";

export type ReserveRequest = {
  saleId: string;
  orderId: string;
  userId: string;
  ip: string;
  quantity: number;
  idempotencyKey: string | null;
  now: number;
};

export type ReserveLimits = {
  userPerWindow: number;
  ipPerWindow: number;
  windowMs: number;
};

const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
const TIMELINE_TTL_SECONDS = 7 * 24 * 60 * 60;

/**
 * One buy attempt: rate limits, window, allowance, stock, ledger and outbox in one EVALSHA (one Redis
 * round trip). A network retry of the same call is a replay (same order id), never a second reservation.
 */
export async function reserveStock(
  redis: Redis,
  req: ReserveRequest,
  limits: ReserveLimits,
): Promise<ReserveOutcome> {
  const keys = saleKeys(req.saleId);
  const reply = await withRedis(() =>
    runScript(
      redis,
      "reserveStock",
      [
        keys.meta,
        keys.stock,
        keys.holdings,
        keys.ledger,
        keys.orders,
        keys.outbox,
        keys.idempotency(req.userId, req.idempotencyKey ?? "-"),
        keys.userRate(req.userId),
        keys.ipRate(req.ip),
        keys.timeline,
      ],
      [
        req.now,
        req.orderId,
        req.userId,
        req.quantity,
        req.idempotencyKey === null ? "0" : "1",
        IDEMPOTENCY_TTL_SECONDS,
        limits.userPerWindow,
        limits.ipPerWindow,
        limits.windowMs,
        TIMELINE_TTL_SECONDS,
      ],
    ),
  );
  return decodeReserveReply(reply);
}
