import { clientIp } from "../buy/attempt";
import type { AppContext, Deps } from "../context";
import { StoreUnavailableError } from "../errors";
import { ApiError } from "../http/api-error";
import type { Frame } from "../memory/frame";
import type { Lease } from "../memory/leases";
import type { SharedSnapshot } from "../memory/shared-snapshot";
import type { StreamKind } from "../memory/stream-budgets";
import { firstEventId } from "../realtime/event-ids";
import { type PumpOptions, pumpEvents } from "../realtime/pump";
import { sseBody } from "../realtime/sse-body";

const WRITE_TIMEOUT_MS = 4_000;

const REFUSED = {
  total: "Too many live streams here right now; poll or retry shortly.",
  client: "Too many live streams for you right now; close one, or poll and retry shortly.",
} as const;

/**
 * A slot for one more stream of `kind`, within its budget (the contract's Realtime: sale streams per
 * client address, order and ticket streams per user, each kind apart, the operator's always), or 503
 * UNAVAILABLE with Retry-After before any stream starts.
 */
export function slotFor(c: AppContext, d: Deps, kind: StreamKind): Lease {
  const { config, memory } = d;
  const perUser = {
    order: { total: config.REALTIME_MAX_ORDER_STREAMS, perClient: config.REALTIME_MAX_STREAMS_PER_USER },
    ticket: {
      total: config.REALTIME_MAX_TICKET_STREAMS,
      perClient: config.REALTIME_MAX_TICKET_STREAMS_PER_USER,
    },
  };
  const slot =
    kind === "operator"
      ? memory.streams.take(kind, "operator", null, d.now)
      : kind === "order" || kind === "ticket"
        ? memory.streams.take(kind, c.get("userId"), perUser[kind], d.now)
        : memory.streams.take(
            kind,
            clientIp(c.get("clientIp")),
            { total: config.REALTIME_MAX_STREAMS, perClient: config.REALTIME_MAX_STREAMS_PER_IP },
            d.now,
          );
  if ("refused" in slot) throw new ApiError("UNAVAILABLE", REFUSED[slot.refused], { retryAfterSeconds: 5 });
  return slot;
}

/**
 * Streams `opts` as Server-Sent Events on this request's own loop (see realtime/pump.ts); the leases are
 * touched on every tick and released when the stream ends, or at once when the client leaves (the
 * request's abort signal, or the body's cancel: on workerd the request may be dropped without the
 * loop ever running again).
 */
export function eventStream(
  c: AppContext,
  d: Deps,
  leases: Lease[],
  opts: Pick<PumpOptions, "first" | "current" | "refresh">,
): Response {
  const release = () => {
    for (const l of leases) l.release();
  };
  const { body, sink, end } = sseBody({ onCancel: release });
  const signal = c.req.raw.signal as AbortSignal | undefined;
  const gone = () => {
    release();
    sink.abort();
  };
  signal?.addEventListener("abort", gone, { once: true });
  const pumping = pumpEvents(sink, {
    ...opts,
    firstId: firstEventId(c.req.header("Last-Event-ID"), Date.now()),
    tickMs: Math.min(d.config.REALTIME_REFRESH_MS, 500),
    pingMs: d.config.REALTIME_PING_MS,
    writeTimeoutMs: WRITE_TIMEOUT_MS,
    onTick: (now) => {
      for (const l of leases) l.touch(now);
    },
  })
    .catch((error: unknown) => console.error("event stream", error))
    .finally(() => {
      signal?.removeEventListener("abort", gone);
      release();
      end();
    });
  // not handed to waitUntil / the task set: a stream lives as long as its client, and must not hold a
  // server's shutdown; its own timers keep it going while the response body is read
  void pumping;
  return c.body(body, 200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store" });
}

/** Runs `open` holding `leases`; releases them if it fails (the route answers an error instead). */
export async function holding<T>(leases: Lease[], open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    for (const l of leases) l.release();
    throw error;
  }
}

/**
 * Streams one key of a shared feed of frames, holding a slot of `kind`: its frame at once (the feed's
 * first value: one read per isolate for a crowd of openings, see memory/first-reads.ts; `unknown` when
 * there is nothing to read), then every change the feed picks up.
 */
export async function frameStream(
  c: AppContext,
  d: Deps,
  o: {
    kind: StreamKind;
    feed: SharedSnapshot<Frame>;
    key: string;
    readOne: () => Promise<Frame | undefined>;
    readAll: (keys: string[]) => Promise<Map<string, Frame>>;
    /** the error for a key with nothing to read (an ApiError, or a SaleLostError for a sale being rebuilt) */
    unknown: () => Error;
    /** checked before the first frame, however fresh the feed is */
    exists?: () => Promise<boolean>;
  },
): Promise<Response> {
  const { feed, key } = o;
  const leases = [slotFor(c, d, o.kind), feed.watch(key, d.now)];
  const first = await holding(leases, async () => {
    if (o.exists && !(await o.exists())) throw o.unknown();
    const read = await feed.first(key, o.readOne);
    if (read.kind === "absent") throw o.unknown();
    if (read.kind === "unavailable")
      throw read.error ?? new StoreUnavailableError("redis", "no read in time");
    return read.value;
  });
  return eventStream(c, d, leases, {
    first,
    current: () => feed.get(key) ?? null,
    refresh: (now) => (feed.due(now) ? feed.refresh(now, o.readAll) : undefined),
  });
}
