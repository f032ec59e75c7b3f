import { callApi } from "./api.js";
import { serverNow } from "./clock.js";
import { readEventStream } from "./event-stream.js";

const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 2000;
const SETTLED_DELAY_MS = 5000;
const STREAM_RETRY_MS = 3000;
const STREAM_MAX_RETRY_MS = 30_000;
const FINAL = new Set(["paid", "expired", "cancelled"]);

/**
 * Follows `GET /api/orders/:id` and reports each new state to `onChange(order)` (or `onError(result)`).
 * The state is pushed through `GET /api/orders/:id/events` (a fetch stream: it needs the token); only
 * while that stream is down does it poll: while queued the delay grows from 250 ms to 2 s; while
 * awaiting payment it checks every 5 s, and every 2 s once the payment window has run out. The stream
 * is tried again with a growing delay. Stops on a final state. Returns `{ stop, refresh }`.
 *
 * @example
 * const tracker = trackOrder(orderId, token, { onChange: render });
 */
export function trackOrder(orderId, token, { onChange, onError }) {
  let stopped = false;
  let timer = null;
  let streamTimer = null;
  let delay = FIRST_DELAY_MS;
  let streamDelay = STREAM_RETRY_MS;
  let last = null;
  let lastEventId = null;
  let inFlight = false;
  let streamUp = false;
  const abort = new AbortController();
  const path = `/api/orders/${encodeURIComponent(orderId)}`;

  const done = () => stopped || (last && FINAL.has(last.status));

  function seen(order) {
    if (!last || last.status !== order.status) onChange(order);
    last = order;
  }

  async function poll() {
    if (done() || inFlight || streamUp) return;
    inFlight = true;
    const r = await callApi(path, { token });
    inFlight = false;
    if (stopped || streamUp) return;
    if (r.ok) {
      seen(r.data);
      if (done()) return;
      if (r.data.status === "queued") delay = Math.min(MAX_DELAY_MS, Math.round(delay * 1.6));
      else delay = Date.parse(r.data.expiresAt) <= serverNow() ? MAX_DELAY_MS : SETTLED_DELAY_MS;
    } else if (r.status === 0 || r.status >= 500 || r.status === 429) {
      delay = Math.min(MAX_DELAY_MS * 2, Math.max(delay * 2, (r.retryAfter ?? 0) * 1000));
    } else {
      onError?.(r);
      return;
    }
    clearTimeout(timer);
    timer = setTimeout(poll, delay);
  }

  async function stream() {
    if (done()) return;
    const end = await readEventStream(`${path}/events`, {
      token,
      signal: abort.signal,
      lastEventId,
      onOpen: () => {
        streamUp = true;
        streamDelay = STREAM_RETRY_MS;
        clearTimeout(timer);
      },
      onEvent: (event) => {
        if (event.event !== "order") return;
        lastEventId = event.id;
        seen(JSON.parse(event.data));
      },
    });
    streamUp = false;
    if (done()) return;
    if (end.status === 401 || end.status === 404) {
      onError?.({ ok: false, status: end.status, error: end.error ?? { code: "UNKNOWN_ORDER" } });
      return;
    }
    poll();
    streamTimer = setTimeout(stream, Math.max(streamDelay, (end.retryAfter ?? 0) * 1000));
    streamDelay = Math.min(STREAM_MAX_RETRY_MS, streamDelay * 2);
  }

  stream();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      clearTimeout(streamTimer);
      abort.abort();
    },
    /** Checks now (after a pay or cancel, or when the payment window has just closed); the stream tells by itself. */
    refresh() {
      if (done() || inFlight || streamUp) return;
      clearTimeout(timer);
      delay = FIRST_DELAY_MS;
      poll();
    },
  };
}
