/**
 * A test reader of Server-Sent Events over `fetch` (the way a page with an Authorization header reads
 * them): collects every event and comment, and waits for conditions on them.
 *
 * @example
 * const s = await openEvents(`${url}/api/sales/${id}/events`);
 * const first = await s.next((e) => e.event === "sale");
 * s.close();
 */
export type SseEvent = { event: string; id: string; data: string; json: Record<string, unknown>; at: number };

export type SseReader = {
  status: number;
  headers: Headers;
  /** the body when the server answered without a stream (an error) */
  text: string;
  events: SseEvent[];
  comments: string[];
  /** true once the server ended the stream */
  ended: boolean;
  /** The first event after index `from` matching `match`, waiting up to `timeoutMs`. */
  next(match?: (e: SseEvent) => boolean, opts?: { from?: number; timeoutMs?: number }): Promise<SseEvent>;
  until(condition: () => boolean, timeoutMs?: number): Promise<void>;
  close(): void;
};

export async function openEvents(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { Accept: "text/event-stream", ...headers },
    signal: controller.signal,
  });
  const reader: SseReader = {
    status: res.status,
    headers: res.headers,
    text: "",
    events: [],
    comments: [],
    ended: false,
    async next(match = () => true, opts = {}) {
      const from = opts.from ?? 0;
      let found: SseEvent | undefined;
      await reader.until(() => {
        found = reader.events.slice(from).find(match);
        return found !== undefined;
      }, opts.timeoutMs);
      return found as SseEvent;
    },
    async until(condition, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!condition()) {
        if (Date.now() > deadline)
          throw new Error(`timed out; events so far: ${reader.events.map((e) => e.data).join("\n")}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () => controller.abort(),
  };
  if (!res.ok || !res.headers.get("content-type")?.startsWith("text/event-stream")) {
    reader.text = await res.text();
    reader.ended = true;
    return reader;
  }
  void pump(res, reader);
  return reader;
}

async function pump(res: Response, reader: SseReader): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let cut = buffer.indexOf("\n\n");
      while (cut >= 0) {
        parseBlock(buffer.slice(0, cut), reader);
        buffer = buffer.slice(cut + 2);
        cut = buffer.indexOf("\n\n");
      }
    }
  } catch {
    // aborted by close()
  }
  reader.ended = true;
}

function parseBlock(block: string, reader: SseReader): void {
  let event = "message";
  let id = "";
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) reader.comments.push(line.slice(1).trim());
    else if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("id:")) id = line.slice(3).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (data.length === 0) return;
  const text = data.join("\n");
  reader.events.push({ event, id, data: text, json: JSON.parse(text), at: Date.now() });
}
