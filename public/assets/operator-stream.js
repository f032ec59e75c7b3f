import { readEventStream } from "./event-stream.js";

const RETRY_MS = 3000;
const MAX_RETRY_MS = 30_000;

/**
 * Follows a sale's operator stream `GET /api/admin/sales/:saleId/events` (a fetch stream: it needs the
 * operator token): `onStats(stats)` and `onTimeline(timeline)` per pushed event, `onUnauthorized()` on a
 * 401. While it is down (a 503 at the cap, a cut connection) it is opened again with a growing delay,
 * sending the last event id. Returns `{ up, stop() }`; `up` is true while events can arrive.
 *
 * @example
 * const stream = followSale(id, { token, onStats: render, onTimeline: draw, onUnauthorized: lock });
 * if (!stream.up) poll();
 */
export function followSale(saleId, { token, onStats, onTimeline, onUnauthorized }) {
  const abort = new AbortController();
  const state = { up: false, stop };
  let stopped = false;
  let retry = null;
  let delay = RETRY_MS;
  let lastEventId = null;

  async function open() {
    const end = await readEventStream(`/api/admin/sales/${encodeURIComponent(saleId)}/events`, {
      token: token(),
      signal: abort.signal,
      lastEventId,
      onOpen: () => {
        state.up = true;
        delay = RETRY_MS;
      },
      onEvent: (event) => {
        if (stopped) return;
        lastEventId = event.id;
        if (event.event === "stats") onStats(JSON.parse(event.data));
        else if (event.event === "timeline") onTimeline(JSON.parse(event.data));
      },
    });
    state.up = false;
    if (stopped) return;
    if (end.status === 401) return onUnauthorized();
    retry = setTimeout(open, Math.max(delay, (end.retryAfter ?? 0) * 1000));
    delay = Math.min(MAX_RETRY_MS, delay * 2);
  }

  function stop() {
    stopped = true;
    state.up = false;
    clearTimeout(retry);
    abort.abort();
  }

  open();
  return state;
}
