import type { QueuedOrder } from "../orders/order-view";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { saleKeys } from "./keys";
import { parseLedgerEntry, reservedOrder } from "./ledger-entry";
import { runScript, type ScriptReply } from "./script";

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

/**
 * Runs void-reservation.lua once: gives an unclaimed reservation back (or leaves a tombstone so that a
 * run still in flight reserves nothing). Throws {@link StoreUnavailableError} when Redis does not answer;
 * calling it again is always safe.
 */
export async function voidReservation(redis: Redis, req: VoidRequest, now: number): Promise<VoidOutcome> {
  const keys = saleKeys(req.saleId);
  const [code, entry] = await withRedis(() =>
    runScript<ScriptReply>(
      redis,
      "voidReservation",
      [
        keys.meta,
        keys.stock,
        keys.holdings,
        keys.ledger,
        keys.orders,
        keys.outbox,
        keys.idempotency(req.userId, req.idempotencyKey ?? "-"),
      ],
      [now, req.orderId, req.userId, req.quantity, req.idempotencyKey === null ? "0" : "1"],
    ),
  );
  const reservation = parseLedgerEntry(entry ? String(entry) : null);
  const order = reservation?.type === "reserve" ? reservedOrder(req.saleId, reservation) : null;
  switch (Number(code)) {
    case 1:
      if (order) return { kind: "voided", order };
      break;
    case 2:
      return { kind: "already_final", order };
    case 3:
      return { kind: "not_initialised" };
    case 4:
      return { kind: "not_reserved" };
    case 5:
      if (order) return { kind: "claimed", order };
      break;
  }
  throw new Error(`void-reservation returned an unexpected reply: ${String(code)}`);
}
