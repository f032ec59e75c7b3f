import voidReservationLua from "../../lua/void-reservation.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf, type ScriptReply } from "./codes";
import { saleKeys } from "./keys";
import { parseLedgerEntry, reservedOrder } from "./ledger-entry";
import type { QueuedOrder } from "./queued-order";
import { defineScript, runScript } from "./script";

export const voidReservationScript = defineScript(
  "void-reservation",
  voidReservationLua,
  "84f7da933d4988202afd614ca17595c52d59e9a8",
);

/** A buy attempt the server gave up on: what void-reservation.lua needs to know about it. */
export type VoidRequest = {
  saleId: string;
  orderId: string;
  userId: string;
  quantity: number;
  idempotencyKey: string | null;
};

/** What voiding an attempt came to (void-reservation.lua's return codes as values). */
export type VoidOutcome =
  | { kind: "voided"; order: QueuedOrder }
  | { kind: "already_final"; order: QueuedOrder | null }
  | { kind: "not_initialised" }
  | { kind: "not_reserved" }
  | { kind: "claimed"; order: QueuedOrder };

const CODES = ["OK", "ALREADY_FINAL", "NOT_INITIALISED", "NOT_RESERVED", "CLAIMED"] as const;

/**
 * Runs void-reservation.lua once: gives an unclaimed reservation back (on a drop of several variants,
 * each line of it to its variant) or leaves a tombstone so that a run still in flight reserves nothing. Throws {@link StoreUnavailableError} when Redis does not answer;
 * calling it again is always safe.
 */
export async function voidReservation(redis: Redis, req: VoidRequest, now: number): Promise<VoidOutcome> {
  const k = saleKeys(req.saleId);
  const keyed = req.idempotencyKey !== null;
  const reply = await withRedis(() =>
    runScript<ScriptReply>(
      redis,
      voidReservationScript,
      [
        k.meta,
        k.stock,
        k.holdings,
        k.ledger,
        k.orders,
        k.outbox,
        k.idempotency(req.userId, req.idempotencyKey ?? "-"),
        k.variantStock,
        k.variantHoldings,
      ],
      [now, req.orderId, req.userId, req.quantity, keyed ? "1" : "0"],
    ),
  );
  const reservation = parseLedgerEntry(reply[1] ? String(reply[1]) : null);
  const order = reservation?.type === "reserve" ? reservedOrder(req.saleId, reservation) : null;
  const code = codeOf("void-reservation", reply, CODES);
  switch (code) {
    case "ALREADY_FINAL":
      return { kind: "already_final", order };
    case "NOT_INITIALISED":
      return { kind: "not_initialised" };
    case "NOT_RESERVED":
      return { kind: "not_reserved" };
  }
  if (!order) throw new Error(`void-reservation returned ${code} without a reservation entry`);
  return code === "OK" ? { kind: "voided", order } : { kind: "claimed", order };
}
