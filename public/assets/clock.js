/**
 * The server's clock as this page sees it. Visitors' clocks can be minutes off, so countdowns use
 * `serverNow()`: the local clock plus the offset measured from the API's `serverTime`, taken from the
 * answer with the shortest round trip (the least uncertain), refreshed when it grows old.
 */
const MAX_SAMPLE_AGE_MS = 60_000;
let best = null;

export function observeServerTime(serverTime, sentAt, receivedAt) {
  const server = Date.parse(serverTime);
  if (Number.isNaN(server)) return;
  const rtt = Math.max(0, receivedAt - sentAt);
  const offset = server - (sentAt + receivedAt) / 2;
  const stale = best && receivedAt - best.at > MAX_SAMPLE_AGE_MS;
  if (!best || stale || rtt <= best.rtt) best = { rtt, offset, at: receivedAt };
}

/** Milliseconds since the epoch on the server's clock (best estimate). */
export function serverNow() {
  return Date.now() + (best ? best.offset : 0);
}

/** The measured offset (server minus local), for display and tests. */
export function clockOffsetMs() {
  return best ? Math.round(best.offset) : 0;
}
