import type { Lease } from "./leases";
import {
  createStreamBudgets,
  type StreamKind,
  type StreamLimits,
  type StreamRefusal,
} from "./stream-budgets";

/**
 * How long a stream that stopped ticking still holds its slot, for a runtime that drops a request
 * without its abort signal or cancel reaching the stream (a live stream ticks every ≤ 500 ms, or waits
 * ≤ 4 s on a blocked write before it drops itself). A disconnect normally frees the slot at once.
 */
const SLOT_STALE_MS = 6_000;

/** This isolate's or process's stream budgets (stream-budgets.ts). */
const budgets = createStreamBudgets(SLOT_STALE_MS);

/**
 * A slot for one more stream of `kind` for `client` in this isolate or process, or why not (the route
 * answers 503 with Retry-After; the page polls meanwhile). `limits` null: never refused (the operator).
 */
export function takeStreamSlot(
  kind: StreamKind,
  client: string,
  limits: StreamLimits | null,
  now: number,
): Lease | StreamRefusal {
  return budgets.take(kind, client, limits, now);
}

/** Streams open in this isolate or process (of one kind, or all). */
export function openStreams(now: number, kind?: StreamKind): number {
  return budgets.count(now, kind);
}
