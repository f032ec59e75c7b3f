import { onTestFinished } from "vitest";
import { type ContractViolation, checkEvent, checkExchange } from "./openapi-check";

/**
 * A test reader of Server-Sent Events over `fetch` (the way a page with an Authorization header reads
 * them): collects every event and comment, and waits for conditions on them. The answer is checked
 * against the OpenAPI document (status, Content-Type, an error's body), and so is each event's data,
 * by the schema its name stands for: a violation fails the next `next` or `until`, and the test that
 * opened the stream.
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
  /** the first event whose data broke the OpenAPI document, if any */
  violation: ContractViolation | null;
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
  const seen = { method: "GET", url: res.url || url, status: res.status, headers: res.headers };
  const reader: SseReader = {
    status: res.status,
    headers: res.headers,
    text: "",
    events: [],
    comments: [],
    ended: false,
    violation: null,
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
        if (reader.violation) throw reader.violation;
        if (Date.now() > deadline)
          throw new Error(`timed out; events so far: ${reader.events.map((e) => e.data).join("\n")}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      if (reader.violation) throw reader.violation;
    },
    close: () => controller.abort(),
  };
  if (!res.ok || !res.headers.get("content-type")?.startsWith("text/event-stream")) {
    reader.text = await res.text();
    reader.ended = true;
    await checkExchange({ ...seen, text: reader.text });
    return reader;
  }
  await checkExchange(seen).catch((error) => {
    controller.abort();
    throw error;
  });
  try {
    onTestFinished(() => {
      if (reader.violation) throw reader.violation;
    });
  } catch {
    // opened in a hook, outside any test: `next` and `until` still report a violation
  }
  void pump(res, reader, seen.url);
  return reader;
}

async function pump(res: Response, reader: SseReader, url: string): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let cut = buffer.indexOf("\n\n");
      while (cut >= 0) {
        const event = parseBlock(buffer.slice(0, cut), reader);
        if (event && !reader.violation)
          await checkEvent(url, event.event, event.data).catch((error: ContractViolation) => {
            reader.violation = error;
          });
        if (event) reader.events.push(event);
        buffer = buffer.slice(cut + 2);
        cut = buffer.indexOf("\n\n");
      }
    }
  } catch {
    // aborted by close()
  }
  reader.ended = true;
}

/** The event a block carries (its comments go to `reader.comments`), or null for comments only. */
function parseBlock(block: string, reader: SseReader): SseEvent | null {
  let event = "message";
  let id = "";
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) reader.comments.push(line.slice(1).trim());
    else if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("id:")) id = line.slice(3).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (data.length === 0) return null;
  const text = data.join("\n");
  return { event, id, data: text, json: JSON.parse(text), at: Date.now() };
}
