/**
 * The checker's rules on the history: every acknowledged buy has its order, no order is left that no
 * acknowledged or unknown buy explains, one Idempotency-Key never holds two orders, a refused buy
 * reserved nothing, and every pay or cancel answer names the state its order ended in.
 */
import type { Add, Judging } from "./check-types";
import type { Op } from "./history";
import { idemKey, type OrderState } from "./observe";

const FINAL_FOR_CODE: Record<string, string> = {
  ORDER_PAID: "paid",
  ORDER_EXPIRED: "expired",
  ORDER_CANCELLED: "cancelled",
};

/** What the buys say: the orders each user's buys explain, the acknowledged ones, order ids per key. */
type BuyAccount = {
  explained: Map<string, Set<string>>;
  /** Per user, unknown buys that may have reserved without anything naming the order. */
  slack: Map<string, number>;
  acked: Map<string, Op>;
  byKey: Map<string, Set<string>>;
  /** Every acknowledged buy by its order id (a refused buy's key may hold a later retry's order). */
  okByOrder: Map<string, Op>;
};

/** Acknowledged, refused and unknown buys against the orders that exist. */
export function checkBuys(j: Judging, buys: Op[]): void {
  const okByOrder = new Map(buys.filter((b) => b.outcome === "ok" && b.orderId).map((b) => [b.orderId, b]));
  const account: BuyAccount = {
    explained: new Map(),
    slack: new Map(),
    acked: new Map(),
    byKey: new Map(),
    okByOrder: okByOrder as Map<string, Op>,
  };
  for (const op of buys) accountBuy(j, account, op);
  checkKeys(j, account.byKey);
  checkAcknowledged(j, account.acked);
  checkUnexplained(j, account);
}

function accountBuy({ state, options, add, figures }: Judging, a: BuyAccount, op: Op): void {
  const explain = (userId: string, orderId: string) => {
    const set = a.explained.get(userId) ?? new Set<string>();
    set.add(orderId);
    a.explained.set(userId, set);
  };
  const answer = op.idempotencyKey
    ? state.redis.idempotency.get(idemKey(op.userId, op.idempotencyKey))
    : undefined;
  const reservedId = answer && Number(answer[0]) === 1 ? String(answer[1]) : undefined;
  if (op.outcome === "ok" && op.orderId) {
    a.acked.set(op.orderId, op);
    explain(op.userId, op.orderId);
  } else if (op.outcome === "unknown") {
    figures.unknownBuys++;
    if (reservedId) explain(op.userId, reservedId);
    else if (op.orderId) explain(op.userId, op.orderId);
    else if (!op.idempotencyKey || options.redisRebuilt)
      a.slack.set(op.userId, (a.slack.get(op.userId) ?? 0) + 1);
    if (reservedId || op.orderId) figures.unknownThatReserved++;
    if (reservedId && !state.orders.has(reservedId)) {
      figures.lost++;
      add("unknown", "an unknown buy reserved (its Idempotency-Key says so) but has no order", {
        orderId: reservedId,
        userId: op.userId,
      });
    }
  } else if (reservedId && !reservedByRetry(state.orders.get(reservedId), a.okByOrder.get(reservedId), op)) {
    figures.duplicates++;
    add("phantom", `answered ${op.status} ${op.code ?? ""} yet its Idempotency-Key holds a reservation`, {
      orderId: reservedId,
      userId: op.userId,
    });
    explain(op.userId, reservedId);
  }
  if (op.idempotencyKey && op.orderId && op.outcome === "ok") {
    const k = idemKey(op.userId, op.idempotencyKey);
    const ids = a.byKey.get(k) ?? new Set<string>();
    ids.add(op.orderId);
    a.byKey.set(k, ids);
  }
}

/**
 * Whether a refused buy's key holds the order of a retry with that key made after the refusal (a 503
 * says "nothing reserved, try again"): acknowledged to an attempt invoked after the refusal answered,
 * and created then, not by the refused attempt committing late.
 */
function reservedByRetry(order: OrderState | undefined, retry: Op | undefined, refused: Op): boolean {
  const after = refused.completedAt ?? Number.POSITIVE_INFINITY;
  const created = order?.createdAtMs;
  return retry !== undefined && retry.invokedAt >= after && created !== undefined && created >= after;
}

function checkKeys({ add, figures }: Judging, byKey: Map<string, Set<string>>): void {
  for (const [k, ids] of byKey) {
    if (ids.size > 1) {
      figures.duplicates += ids.size - 1;
      add("duplicate", `one Idempotency-Key acknowledged ${ids.size} different orders`, {
        userId: k.split("\u0000")[0],
      });
    }
  }
}

function checkAcknowledged({ state, add, figures }: Judging, acked: Map<string, Op>): void {
  figures.acknowledged = acked.size;
  for (const [orderId, op] of acked) {
    figures.acknowledgedUnits += op.quantity ?? 0;
    const o = state.orders.get(orderId);
    if (!o) {
      figures.lost++;
      add("lost", "acknowledged (202) but no order exists", { orderId, userId: op.userId });
    } else if (o.userId !== op.userId || o.quantity !== op.quantity) {
      figures.lost++;
      add("lost", `acknowledged ${op.userId}×${op.quantity}, order is ${o.userId}×${o.quantity}`, {
        orderId,
      });
    }
  }
}

function checkUnexplained({ state, add, figures }: Judging, { explained, slack }: BuyAccount): void {
  const unexplained = new Map<string, string[]>();
  for (const o of state.orders.values()) {
    if (explained.get(o.userId)?.has(o.id)) continue;
    // a reservation voided after its attempt was answered 503 is recorded as a cancelled order
    if (o.status === "cancelled" && state.redis.ledger[`x:${o.id}`]?.reason === "void") continue;
    unexplained.set(o.userId, [...(unexplained.get(o.userId) ?? []), o.id]);
  }
  for (const [userId, ids] of unexplained) {
    const extra = ids.length - (slack.get(userId) ?? 0);
    if (extra > 0) {
      figures.duplicates += extra;
      add("duplicate", `${ids.length} order(s) no acknowledged or unknown buy explains: ${ids.join(", ")}`, {
        userId,
      });
    }
  }
}

/** Pay and cancel answers against the state each order ended in (final states never change). */
export function checkAnswers(orders: Map<string, OrderState>, ops: Op[], add: Add): void {
  for (const op of ops) {
    if ((op.kind !== "pay" && op.kind !== "cancel") || !op.orderId) continue;
    const o = orders.get(op.orderId);
    const expected =
      op.outcome === "ok" ? (op.kind === "pay" ? "paid" : "cancelled") : FINAL_FOR_CODE[op.code ?? ""];
    if (!expected) continue;
    if (!o)
      add("answer", `${op.kind} answered ${op.status} for an order that does not exist`, {
        orderId: op.orderId,
      });
    else if (o.status !== expected)
      add(
        "answer",
        `${op.kind} answered ${op.status} ${op.code ?? op.orderStatus ?? ""}, order ended ${o.status}`,
        {
          orderId: op.orderId,
        },
      );
  }
}
