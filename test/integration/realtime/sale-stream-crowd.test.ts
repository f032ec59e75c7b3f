import { Agent } from "undici";
import { describe, expect, it } from "vitest";
import { appForFile } from "../../support/app-per-file";
import { checkEvent } from "../../support/openapi-check";
import { commandCounts, commandDelta, total } from "../../support/redis-inspect";

/**
 * A crowd opening the sale page at once: 1,000 anonymous sale streams opened together, each from its own
 * address, into one isolate or process. Every one is served its first `sale` event, and what their
 * openings cost Redis does not grow with them: the first frame comes from what the process holds (one
 * read per process at a time; the other openings wait for its value), and the feed's refreshes are one
 * read per interval for every watcher.
 */
const WATCHERS = 1_000;
const REFRESH_MS = 1_000;

const app = appForFile({
  vars: {
    REALTIME_MAX_STREAMS: String(WATCHERS * 2),
    REALTIME_REFRESH_MS: String(REFRESH_MS),
    RATE_LIMIT_IP_PER_WINDOW: "100000",
  },
});

type Opened = { status: number; firstEvent: string | null; text: string; close(): void };

/** Opens one sale stream from `ip` and reads it up to its first event (or the error body). */
async function openSaleStream(url: string, ip: string, dispatcher: Agent): Promise<Opened> {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { Accept: "text/event-stream", "CF-Connecting-IP": ip },
    signal: controller.signal,
    dispatcher,
  } as RequestInit);
  const close = () => controller.abort();
  if (res.status !== 200) return { status: res.status, firstEvent: null, text: await res.text(), close };
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  while (!buffer.includes("\n\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
  }
  const block = buffer.slice(0, buffer.indexOf("\n\n"));
  const event = /^event: (.*)$/m.exec(block)?.[1] ?? null;
  const data = /^data: (.*)$/m.exec(block)?.[1] ?? "";
  if (event) await checkEvent(url, event, data);
  return { status: 200, firstEvent: event, text: data, close };
}

describe("a crowd opening a sale's stream at once", () => {
  it(`serves ${WATCHERS} sale streams opened together from ${WATCHERS} addresses, with reads flat in the watchers`, async () => {
    const sale = await app.api.createSale({ stock: 100 });
    const url = `${app.worker.url}/api/sales/${sale.saleId}/events`;
    const dispatcher = new Agent({ connections: WATCHERS, pipelining: 0, headersTimeout: 60_000 });
    const opened: Opened[] = [];
    try {
      const before = await commandCounts(app.redis);
      const startedAt = Date.now();
      const answers = await Promise.all(
        Array.from({ length: WATCHERS }, (_, i) =>
          openSaleStream(url, `198.18.${(i >> 8) & 255}.${i & 255}`, dispatcher).then((o) => {
            opened.push(o);
            return o;
          }),
        ),
      );
      const elapsedMs = Date.now() - startedAt;
      const delta = commandDelta(before, await commandCounts(app.redis));
      const statuses: Record<string, number> = {};
      for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
      const firstFrames = answers.filter((a) => a.firstEvent === "sale").length;
      console.log(
        `${app.runtime}: ${WATCHERS} sale streams in ${elapsedMs} ms: ${JSON.stringify(statuses)}, first frames ${firstFrames}, commands ${JSON.stringify(delta)}`,
      );
      const refused = answers.find((a) => a.status !== 200);
      expect(refused?.text ?? "", "a refusal's body").toBe("");
      expect(statuses).toEqual({ 200: WATCHERS });
      expect(firstFrames).toBe(WATCHERS);
      // the openings' reads: a few for the first frame, then one feed refresh per interval at most
      const reads = total(delta);
      expect(reads).toBeLessThanOrEqual(10 + 3 * Math.ceil(elapsedMs / REFRESH_MS));
    } finally {
      for (const o of opened) o.close();
      await dispatcher.close().catch(() => {});
    }
  });
});
