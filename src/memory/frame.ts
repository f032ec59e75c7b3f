/**
 * A finished event value, serialized once per isolate or process and shared by every stream that writes
 * it: the feed renders a value into a frame when it reads it (once per refresh, not once per stream), and
 * a frame equal to the one before keeps that frame and its `version`. A stream's tick is then a version
 * comparison plus, when it changed, one write of ready text (with the stream's own event id in front).
 *
 * @example
 * const next = keepSame(previous, frameOf([{ event: "sale", data: JSON.stringify(view), key }]));
 * if (next.version !== lastVersion) write(eventText(next.events[0], id));
 */
export type FrameEvent = {
  readonly event: string;
  /** What makes two events the same (e.g. everything but the clock reading); written again only when it changes. */
  readonly key: string;
  /** `\ndata: <json>\n\n`: the event's text after its `id:` line, built once. */
  readonly tail: string;
};

export type Frame = {
  /** Bumped whenever the events change; equal versions of one key carry equal events. */
  readonly version: number;
  readonly events: readonly FrameEvent[];
  /** The stream ends after writing this frame (an order's final status). */
  readonly final: boolean;
};

/** A new frame (version 1; `keepSame` numbers it after the previous one). */
export function frameOf(events: { event: string; data: string; key?: string }[], final = false): Frame {
  return {
    version: 1,
    events: events.map((e) => ({ event: e.event, key: e.key ?? e.data, tail: `\ndata: ${e.data}\n\n` })),
    final,
  };
}

/** `previous` when `next` carries the same events (same keys), else `next` with the following version. */
export function keepSame(previous: Frame | undefined, next: Frame): Frame {
  if (!previous) return next;
  const same =
    previous.final === next.final &&
    previous.events.length === next.events.length &&
    previous.events.every((e, i) => e.event === next.events[i]?.event && e.key === next.events[i]?.key);
  return same ? previous : { ...next, version: previous.version + 1 };
}

/** The event's `data:` text (its JSON), as the feed serialized it. */
export function eventData(e: FrameEvent): string {
  return e.tail.slice("\ndata: ".length, -"\n\n".length);
}

/** One event as written on a stream: `event:`, the stream's own `id:`, and the shared data. */
export function eventText(e: FrameEvent, id: number | bigint): string {
  return `event: ${e.event}\nid: ${id}${e.tail}`;
}

/**
 * A watched order's finished `order` event with its owner: a stream writes it only to a shopper whose id
 * matches `userId`. Its key is the status (one event per status change); final after paid/expired/cancelled.
 */
export type WatchedOrder = { userId: string; frame: Frame };

/** How far an order got (its frame's key is its status): queued, then awaiting payment, then final. */
const orderStage = (o: WatchedOrder) => (o.frame.final ? 2 : o.frame.events[0]?.key === "queued" ? 0 : 1);

/**
 * {@link keepSame} for a watched order: the previous value while its owner and events are the same, and
 * while the next was read before it (a stream's own read and the feed's refresh run at once; an order
 * never goes back to an earlier status).
 */
export function keepOrder(previous: WatchedOrder | undefined, next: WatchedOrder): WatchedOrder {
  if (!previous || previous.userId !== next.userId) return next;
  if (orderStage(next) < orderStage(previous)) return previous;
  const frame = keepSame(previous.frame, next.frame);
  return frame === previous.frame ? previous : { userId: next.userId, frame };
}
