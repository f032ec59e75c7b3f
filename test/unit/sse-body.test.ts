import { describe, expect, it } from "vitest";
import { sseBody } from "../../src/realtime/sse-body";

const text = (chunks: Uint8Array[]) => chunks.map((c) => new TextDecoder().decode(c)).join("");

describe("the SSE body", () => {
  it("takes writes at once while the reader keeps up, and ends cleanly", async () => {
    const { body, sink, end } = sseBody();
    expect(sink.write("event: sale\nid: 1\ndata: {}\n\n")).toBeUndefined();
    end();
    expect(sink.isOpen()).toBe(false);
    expect(await new Response(body).text()).toBe("event: sale\nid: 1\ndata: {}\n\n");
  });

  it("reports a write as unfinished while the reader is behind, finished once it reads", async () => {
    const { body, sink } = sseBody();
    const big = "x".repeat(20_000);
    const pending = sink.write(big);
    expect(pending).toBeInstanceOf(Promise);
    let done = false;
    void pending?.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(done).toBe(false);
    const reader = body.getReader();
    const chunks: Uint8Array[] = [];
    const first = await reader.read();
    if (first.value) chunks.push(first.value);
    await pending;
    expect([done, text(chunks).length]).toEqual([true, 20_000]);
  });

  it("knows when the client went away (the runtime cancels the body), and a dropped stream errors", async () => {
    const gone = sseBody();
    await gone.body.cancel();
    expect(gone.sink.isOpen()).toBe(false);
    expect(gone.sink.write("late")).toBeUndefined();
    const slow = sseBody();
    slow.sink.abort();
    await expect(slow.body.getReader().read()).rejects.toThrow(/slow reader/);
  });
});
