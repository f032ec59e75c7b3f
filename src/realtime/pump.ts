/**
 * One stream's loop, in its own request's context: writes the first value at once, then every `tickMs`
 * reads the current value (from the isolate's shared snapshot) and writes it when it changed, a `: ping`
 * comment when nothing was written for `pingMs`, and stops when the client is gone, after a final value,
 * or when a write blocks longer than `writeTimeoutMs` (a slow reader is dropped and reconnects; it never
 * holds up the other streams, which run loops of their own). Free of any framework or runtime API.
 *
 * @example
 * await pumpEvents(sink, { event: "sale", first, read, same, firstId: nextEventId(lastEventId, Date.now()) });
 */
export type EventSink = {
  write(text: string): Promise<unknown>;
  isOpen(): boolean;
  /** Drops the stream (the client will reconnect). */
  abort(): void;
};

export type PumpOptions<T> = {
  event: string;
  first: T;
  firstId: number;
  /** The current value, or null to keep the last one; may refresh the shared snapshot with own I/O. */
  read(): Promise<T | null>;
  /** The JSON written for a value; two values with the same `key` are not written twice. */
  data(value: T): string;
  /**
   * Instead of one `event` with `data`: the events a value is written as (e.g. `stats` and `timeline`);
   * of a changed value only the events whose `key` (default: data) changed are written, each with its own id.
   */
  frames?(value: T): { event: string; data: string; key?: string }[];
  key(value: T): string;
  /** True for a value after which the stream ends. */
  final?(value: T): boolean;
  /** Called on every tick, to keep this stream's leases fresh. */
  onTick?(now: number): void;
  tickMs: number;
  pingMs: number;
  writeTimeoutMs: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
};

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The id of a stream's first event: above the client's `Last-Event-ID`, and above the clock. */
export function firstEventId(lastEventId: string | undefined, now: number): number {
  const last = Number(lastEventId);
  const valid = Number.isSafeInteger(last) && last >= 0 && last < 1e15;
  return Math.max(valid ? last + 1 : 0, now);
}

export async function pumpEvents<T>(
  sink: EventSink,
  o: PumpOptions<T>,
): Promise<"final" | "closed" | "slow"> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? defaultSleep;
  let id = o.firstId;
  let lastKey = "";
  let lastWriteAt = now();

  const write = async (text: string): Promise<boolean> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<false>((r) => {
      timer = setTimeout(() => r(false), o.writeTimeoutMs);
    });
    const ok = await Promise.race([sink.write(text).then(() => true), timedOut]);
    clearTimeout(timer);
    if (!ok) sink.abort();
    lastWriteAt = now();
    return ok;
  };
  const lastData = new Map<string, string>();
  const send = async (value: T): Promise<boolean> => {
    lastKey = o.key(value);
    const frames = o.frames?.(value) ?? [{ event: o.event, data: o.data(value) }];
    let text = "";
    for (const f of frames) {
      const key = f.key ?? f.data;
      if (o.frames && lastData.get(f.event) === key) continue;
      lastData.set(f.event, key);
      text += `event: ${f.event}\nid: ${id++}\ndata: ${f.data}\n\n`;
    }
    return text === "" || write(text);
  };

  if (!(await send(o.first))) return "slow";
  if (o.final?.(o.first)) return "final";
  while (sink.isOpen()) {
    await sleep(o.tickMs);
    if (!sink.isOpen()) break;
    o.onTick?.(now());
    const value = await o.read();
    if (!sink.isOpen()) break;
    if (value !== null && o.key(value) !== lastKey) {
      if (!(await send(value))) return "slow";
      if (o.final?.(value)) return "final";
    } else if (now() - lastWriteAt >= o.pingMs) {
      if (!(await write(": ping\n\n"))) return "slow";
    }
  }
  return "closed";
}
