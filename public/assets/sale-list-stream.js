const RETRY_MS = 5000;

/**
 * Follows the shop's sale list through `GET /api/sales/events` with `EventSource`: `onList(body)` per
 * pushed list (the body of `GET /api/sales`), `onState(up)` when the stream comes up or goes down (the
 * list polls only while it is down). The browser reconnects by itself (sending Last-Event-ID); when it
 * gives up (a 503 past the stream budget) the stream is opened again after a few seconds. Returns `stop()`.
 *
 * @example
 * const stop = watchSaleList({ onList: (body) => render(body.sales), onState: (up) => (streamUp = up) });
 */
export function watchSaleList({ onList, onState }) {
  let source = null;
  let retry = null;
  let up = false;

  const setUp = (next) => {
    if (next !== up) {
      up = next;
      onState(up);
    }
  };

  function open() {
    source = new EventSource("/api/sales/events");
    source.addEventListener("sales", (event) => {
      setUp(true);
      try {
        onList(JSON.parse(event.data));
      } catch {
        // a malformed event is skipped; the next one carries the whole list again
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
