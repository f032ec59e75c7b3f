import type { Lease } from "./leases";

/**
 * Who may hold a stream: anonymous sale watchers (the sale and sale-list streams, bounded in all and per
 * client address), shoppers following their orders and waiters following their tickets (each bounded
 * in all and per user), and the operator (always served; counted only to be seen).
 */
export type StreamKind = "sale" | "order" | "ticket" | "operator";

/** A budget's bounds: streams of its kind in this isolate or process, and per client (address or user). */
export type StreamLimits = { total: number; perClient: number };

/** Why a stream was refused: its kind's budget is spent here, or its client's share of it. */
export type StreamRefusal = { refused: "total" | "client" };

export type StreamBudgets = {
  /** A slot for one more stream of `kind` for `client`, or why not. `operator` streams are never refused. */
  take(kind: StreamKind, client: string, limits: StreamLimits | null, now: number): Lease | StreamRefusal;
  /** Streams of `kind` held now (all kinds when omitted). */
  count(now: number, kind?: StreamKind): number;
};

type Slot = { touchedAt: number; released: boolean };
type Pool = { clients: Map<string, Set<Slot>>; size: number; sweptAt: number };

/** How often, at most, a pool is swept for slots gone stale (a sweep visits every slot). */
const SWEEP_EVERY_MS = 250;

/**
 * Stream budgets for one isolate or process. A stream holds a slot from its opening until it ends: it
 * releases the slot when its client disconnects (the request's abort signal or the body's cancel, on
 * every runtime) and touches it on every tick; a slot not touched for `staleMs` counts as gone, for a
 * runtime that drops a request without telling it. Counting per client is a map lookup: no scan per
 * opening, whatever the number of streams.
 *
 * @example
 * const budgets = createStreamBudgets(6_000);
 * const slot = budgets.take("sale", clientIp, { total: 3000, perClient: 32 }, Date.now());
 * if ("refused" in slot) return unavailable(slot.refused);
 * signal.addEventListener("abort", () => slot.release());
 */
export function createStreamBudgets(staleMs: number): StreamBudgets {
  const pools = new Map<StreamKind, Pool>();
  const poolOf = (kind: StreamKind): Pool => {
    let pool = pools.get(kind);
    if (!pool) {
      pool = { clients: new Map(), size: 0, sweptAt: Number.NEGATIVE_INFINITY };
      pools.set(kind, pool);
    }
    return pool;
  };
  const drop = (pool: Pool, client: string, slots: Set<Slot>, slot: Slot) => {
    if (slot.released) return;
    slot.released = true;
    slots.delete(slot);
    pool.size--;
    if (slots.size === 0 && pool.clients.get(client) === slots) pool.clients.delete(client);
  };
  const sweep = (pool: Pool, now: number) => {
    if (now - pool.sweptAt < SWEEP_EVERY_MS) return;
    pool.sweptAt = now;
    for (const [client, slots] of pool.clients)
      for (const slot of slots) if (now - slot.touchedAt > staleMs) drop(pool, client, slots, slot);
  };
  return {
    take(kind, client, limits, now) {
      const pool = poolOf(kind);
      sweep(pool, now);
      let slots = pool.clients.get(client);
      if (limits && pool.size >= limits.total) return { refused: "total" };
      if (limits && (slots?.size ?? 0) >= limits.perClient) return { refused: "client" };
      if (!slots) {
        slots = new Set();
        pool.clients.set(client, slots);
      }
      const held = slots;
      const slot: Slot = { touchedAt: now, released: false };
      held.add(slot);
      pool.size++;
      return {
        key: client,
        touch(at) {
          if (!slot.released) slot.touchedAt = at;
        },
        release() {
          drop(pool, client, held, slot);
        },
      };
    },
    count(now, kind) {
      let total = 0;
      for (const [k, pool] of pools) {
        if (kind && k !== kind) continue;
        sweep(pool, now);
        total += pool.size;
      }
      return total;
    },
  };
}
