/**
 * Each runtime's default stream budgets, sized from what one isolate or process measurably held here
 * (`bench/realtime.ts`, README "Benchmark": sale watchers pushed within 1 s at p99 while buys run):
 * workerd ~3,000 per isolate (p99 632 ms; 10,000 went to 2.1 s), Deno 10,000 only at a full core
 * (p99 517 ms, buys answered 42/s of 50), so half of that, Bun 10,000 at 63 % of a core (p99 588 ms). Order
 * streams get a budget of their own on top (a fifth), so anonymous sale watchers never crowd out a
 * buyer's order, and so do a waiting room's ticket streams (as many as sale streams: Bun held 10,000
 * waiters at 49 % of a core, frontier pushes p99 925 ms, `bench/room.ts`), so a room's crowd never
 * crowds out an order either; the operator's stream is never counted against any.
 *
 * `pingMs` is also how soon a disconnect is noticed where only a write tells: workerd learns that a
 * client left when it next writes to it (its request signal aborts then, not before), so its streams
 * ping every 500 ms and a slot comes back within a second; Deno and Bun abort the request at once.
 */
export const STREAM_DEFAULTS = {
  workers: { sale: 3_000, order: 600, ticket: 3_000, pingMs: 500 },
  deno: { sale: 5_000, order: 1_000, ticket: 5_000, pingMs: 10_000 },
  bun: { sale: 10_000, order: 2_000, ticket: 10_000, pingMs: 10_000 },
} as const;

/** Sale streams one client address may hold in one isolate or process (a household or office shares one). */
export const STREAMS_PER_IP = 32;
/** Order streams one shopper may hold in one isolate or process (a few tabs, a few orders). */
export const STREAMS_PER_USER = 8;
/** Ticket streams one waiter may hold in one isolate or process (one ticket per sale: a tab or two, a few rooms). */
export const TICKET_STREAMS_PER_USER = 4;

/** The defaults of a server runtime as settings, under the environment's own values. */
export function streamDefaultSettings(runtime: "deno" | "bun"): Record<string, string> {
  const d = STREAM_DEFAULTS[runtime];
  return {
    REALTIME_MAX_STREAMS: String(d.sale),
    REALTIME_MAX_ORDER_STREAMS: String(d.order),
    REALTIME_MAX_TICKET_STREAMS: String(d.ticket),
    REALTIME_PING_MS: String(d.pingMs),
  };
}
