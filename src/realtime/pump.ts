import { eventText, type Frame } from "../memory/frame";
import { type EventId, eventIdCounter } from "./event-ids";

/**
 * One stream's loop, in its own request's context: writes the first frame at once, then every `tickMs`
 * lets the isolate's feed refresh if it is due (with this stream's own I/O; see shared-snapshot.ts) and
 * compares the feed's current frame's version with the last one written: a new version is one write of
 * the frame's ready text (frame.ts), else a `: ping` comment when nothing was written for `pingMs`. It stops
 * when the client is gone, after a final frame, or when a write stays unfinished longer than
 * `writeTimeoutMs` (a slow reader is dropped and reconnects; writes are not awaited, so it never holds up
 * this loop or the other streams, and a stream never has more than one write in flight). Free of any
 * framework or runtime API.
 *
 * @example
 * await pumpEvents(sink, { first, current: () => feed.get(saleId) ?? null, firstId: firstEventId(lastEventId, Date.now()), … });
 */
export type EventSink = {
  /** Writes text; a promise while the write is unfinished (the reader is behind), else undefined. */
  write(text: string): Promise<unknown> | undefined;
  isOpen(): boolean;
  /** Drops the stream (the client will reconnect). */
  abort(): void;
};

export type PumpOptions = {
  first: Frame;
  firstId: EventId;
  /** The feed's current frame (memory only), or null to keep the last one written. */
  current(): Frame | null;
  /** Refreshes the shared snapshot with this stream's own I/O when it is due; cheap (no promise) when not. */
  refresh?(now: number): Promise<void> | undefined;
  /** Called on every tick, to keep this stream's leases fresh. */
  onTick?(now: number): void;
  tickMs: number;
  pingMs: number;
  writeTimeoutMs: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
};

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function pumpEvents(sink: EventSink, o: PumpOptions): Promise<"final" | "closed" | "slow"> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? defaultSleep;
  const out = eventWriter(sink, { firstId: o.firstId, now, sleep, writeTimeoutMs: o.writeTimeoutMs });
  const finish = async () => ((await out.drained()) ? ("final" as const) : out.slow());
  out.send(o.first, now());
  if (o.first.final) return finish();
  while (sink.isOpen()) {
    await sleep(o.tickMs);
    if (!sink.isOpen()) break;
    const at = now();
    o.onTick?.(at);
    const refreshing = o.refresh?.(at);
    if (refreshing) {
      await refreshing;
      if (!sink.isOpen()) break;
    }
    if (out.busySince() !== null) {
      if (at - (out.busySince() ?? at) > o.writeTimeoutMs) return out.slow();
      continue;
    }
    const frame = o.current();
    if (frame && frame.version !== out.lastVersion()) {
      out.send(frame, at);
      if (frame.final) return finish();
    } else if (at - out.lastWriteAt() >= o.pingMs) {
      out.write(": ping\n\n", at);
    }
  }
  return "closed";
}

/**
 * One stream's writes: frames as the events that changed (each with the stream's next id), pings, and
 * the write in flight (a reader that does not take it within `writeTimeoutMs` is dropped as slow).
 */
function eventWriter(
  sink: EventSink,
  o: { firstId: EventId; now: () => number; sleep: (ms: number) => Promise<void>; writeTimeoutMs: number },
) {
  const nextId = eventIdCounter(o.firstId);
  let lastVersion = Number.NaN;
  let lastWriteAt = o.now();
  let inFlight: Promise<unknown> | null = null;
  let inFlightSince = 0;
  const lastKeys = new Map<string, string>();
  const write = (text: string, at: number) => {
    lastWriteAt = at;
    const pending = sink.write(text);
    if (!pending) return;
    const mine = pending.then(
      () => {
        if (inFlight === mine) inFlight = null;
      },
      () => sink.abort(),
    );
    inFlight = mine;
    inFlightSince = at;
  };
  return {
    write,
    send(frame: Frame, at: number) {
      lastVersion = frame.version;
      let text = "";
      for (const e of frame.events) {
        if (lastKeys.get(e.event) === e.key) continue;
        lastKeys.set(e.event, e.key);
        text += eventText(e, nextId());
      }
      if (text !== "") write(text, at);
    },
    /** The last write finished within `writeTimeoutMs` (else the reader is dropped). */
    async drained() {
      const pending = inFlight;
      if (!pending) return true;
      await Promise.race([pending, o.sleep(Math.max(0, o.writeTimeoutMs - (o.now() - inFlightSince)))]);
      return inFlight !== pending;
    },
    slow() {
      sink.abort();
      return "slow" as const;
    },
    busySince: () => (inFlight ? inFlightSince : null),
    lastVersion: () => lastVersion,
    lastWriteAt: () => lastWriteAt,
  };
}
