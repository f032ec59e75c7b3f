import type { EventSink } from "./pump";

const encoder = new TextEncoder();
/** Bytes a stream may hold unread before its writes count as unfinished (a slow reader). */
const HIGH_WATER_BYTES = 16 * 1024;

/**
 * A Server-Sent-Events body as one plain `ReadableStream` (Web streams only, the same on Workers, Deno and
 * Bun): a write is a synchronous enqueue of the encoded text, and finishes at once while the reader keeps
 * up (less than HIGH_WATER_BYTES queued); past that it finishes when the runtime pulls again, so the pump
 * sees a slow reader and drops it. No transform stream, no per-write promise chain: with thousands of
 * streams in one process the writes are most of what a change costs. `onCancel` runs when the reader
 * cancels the body (the client left).
 *
 * @example
 * const { body, sink, end } = sseBody();
 * void pumpEvents(sink, options).finally(end);
 * return new Response(body, { headers: { "Content-Type": "text/event-stream" } });
 */
export function sseBody(opts: { onCancel?: () => void } = {}): {
  body: ReadableStream<Uint8Array>;
  sink: EventSink;
  end(): void;
} {
  let controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  let open = true;
  let waiting: (() => void) | null = null;
  const release = () => {
    const w = waiting;
    waiting = null;
    w?.();
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      pull: release,
      cancel() {
        open = false;
        release();
        opts.onCancel?.();
      },
    },
    { highWaterMark: HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength },
  );
  const sink: EventSink = {
    write(text) {
      if (!open || !controller) return undefined;
      controller.enqueue(encoder.encode(text));
      if ((controller.desiredSize ?? 0) > 0) return undefined;
      return new Promise<void>((resolve) => {
        waiting = resolve;
      });
    },
    isOpen: () => open,
    abort() {
      if (!open) return;
      open = false;
      release();
      controller?.error(new Error("slow reader: dropped, it reconnects"));
    },
  };
  return {
    body,
    sink,
    end() {
      if (!open) return;
      open = false;
      release();
      controller?.close();
    },
  };
}
