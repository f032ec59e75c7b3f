const RETRY_MS = 5000;

/**
 * Follows a sale through `GET /api/sales/:saleId/events` with `EventSource`: `onSale(sale)` per pushed
 * Sale, `onState(up)` when the stream comes up or goes down (the page polls only while it is down).
 * The browser reconnects by itself (sending Last-Event-ID); when it gives up (a 503 at the cap, a 404)
 * the stream is opened again after a few seconds. Returns `stop()`.
 *
 * @example
 * const stop = watchSale(id, { onSale: render, onState: (up) => (streamUp = up) });
 */
export function watchSale(saleId, { onSale, onState }) {
  let source = null;
  let retry = null;
  let up = false;
  const url = `/api/sales/${encodeURIComponent(saleId)}/events`;

  const setUp = (next) => {
    if (next !== up) {
      up = next;
      onState(up);
    }
  };

  function open() {
    source = new EventSource(url);
    source.addEventListener("sale", (event) => {
      setUp(true);
      try {
        onSale(JSON.parse(event.data));
      } catch {
        // a malformed event is skipped; the next one carries the whole state again
      }
    });
    source.addEventListener("error", () => {
      setUp(false);
      if (source.readyState === EventSource.CLOSED) {
        source = null;
        retry = setTimeout(open, RETRY_MS);
      }
    });
  }

  open();
  return function stop() {
    clearTimeout(retry);
    source?.close();
    source = null;
    setUp(false);
  };
}
