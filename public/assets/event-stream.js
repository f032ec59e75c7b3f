/**
 * Server-Sent Events read with `fetch` (for streams that need an Authorization header, which
 * `EventSource` cannot send). Calls `onOpen()` once the stream is up and `onEvent({ event, id, data })`
 * per event; resolves when the stream ends: `{ status, error, retryAfter }` (`status` 0 when the
 * connection failed or was cut, `error` the API's error body when it answered without a stream).
 *
 * @example
 * const stop = new AbortController();
 * const end = await readEventStream(`/api/orders/${id}/events`, { token, signal: stop.signal, onEvent });
 */
export async function readEventStream(path, { token, signal, lastEventId, onOpen, onEvent }) {
  const headers = { Accept: "text/event-stream" };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (lastEventId) headers["Last-Event-ID"] = lastEventId;
  let res;
  try {
    res = await fetch(path, { headers, signal, cache: "no-store" });
  } catch {
    return { status: 0, error: null, retryAfter: null };
  }
  if (!res.ok || !(res.headers.get("Content-Type") ?? "").startsWith("text/event-stream")) {
    const body = await res.json().catch(() => null);
    const retryAfter = Number(res.headers.get("Retry-After")) || null;
    return { status: res.status, error: body?.error ?? null, retryAfter };
  }
  onOpen?.();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value.replace(/\r\n?/g, "\n");
      let cut = buffer.indexOf("\n\n");
      while (cut >= 0) {
        const event = parseEvent(buffer.slice(0, cut));
        buffer = buffer.slice(cut + 2);
        if (event) onEvent(event);
        cut = buffer.indexOf("\n\n");
      }
    }
    return { status: 200, error: null, retryAfter: null, ended: true };
  } catch {
    return { status: 0, error: null, retryAfter: null };
  }
}

function parseEvent(block) {
  let event = "message";
  let id = "";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("id:")) id = line.slice(3).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  return data.length ? { event, id, data: data.join("\n") } : null;
}
