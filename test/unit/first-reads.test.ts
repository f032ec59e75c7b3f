import { describe, expect, it } from "vitest";
import { createFirstReads, FIRST_READS_AT_ONCE, firstValue, RECENT_MS } from "../../src/memory/first-reads";
import { createSharedSnapshot } from "../../src/memory/shared-snapshot";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A read that finishes when the test says so, counting how many were started. */
function gatedRead<V>() {
  const started: Array<(v: V | undefined | Error) => void> = [];
  const read = () =>
    new Promise<V | undefined>((resolve, reject) => {
      started.push((v) => (v instanceof Error ? reject(v) : resolve(v)));
    });
  return { read, started };
}

describe("a stream's first value", () => {
  it("is read once for a crowd of openings of one key; the others take its value", async () => {
    const feed = createSharedSnapshot<string>({ maxAgeMs: 250 });
    const gate = gatedRead<string>();
    const openings = Array.from({ length: 500 }, () => feed.first("sale-1", gate.read));
    await sleep(50);
    expect(gate.started.length).toBe(1);
    gate.started[0]?.("frame");
    const firsts = await Promise.all(openings);
    expect(new Set(firsts.map((f) => JSON.stringify(f)))).toEqual(
      new Set([JSON.stringify({ kind: "value", value: "frame" })]),
    );
    await feed.first("sale-1", gate.read);
    expect(gate.started.length).toBe(1); // fresh now: no read
  });

  it("shares an unknown key's answer with the openings that waited for it", async () => {
    const feed = createSharedSnapshot<string>({ maxAgeMs: 250 });
    const gate = gatedRead<string>();
    const openings = Array.from({ length: 50 }, () => feed.first("nope", gate.read));
    await sleep(50);
    gate.started[0]?.(undefined);
    expect((await Promise.all(openings)).map((f) => f.kind)).toEqual(Array(50).fill("absent"));
    expect(gate.started.length).toBe(1);
  });

  it(`reads at most ${FIRST_READS_AT_ONCE} keys at once, whatever the number of keys opened`, async () => {
    const feed = createSharedSnapshot<string>({ maxAgeMs: 250 });
    const gate = gatedRead<string>();
    const openings = Array.from({ length: 40 }, (_, i) => feed.first(`sale-${i}`, gate.read));
    await sleep(50);
    expect(gate.started.length).toBe(FIRST_READS_AT_ONCE);
    for (let done = 0; done < 40; done++) {
      while (gate.started.length <= done) await sleep(5);
      gate.started[done]?.(`v${done}`);
    }
    expect((await Promise.all(openings)).every((f) => f.kind === "value")).toBe(true);
  });

  it("starts from a recent snapshot when the read fails or is slow, never refusing", async () => {
    const feed = createSharedSnapshot<string>({ maxAgeMs: 250 });
    feed.put("sale-1", "older", Date.now() - 5_000);
    const failing = gatedRead<string>();
    const failed = feed.first("sale-1", failing.read);
    const waiting = feed.first("sale-1", failing.read);
    await sleep(30);
    failing.started[0]?.(new Error("redis timed out"));
    expect(await failed).toEqual({ kind: "value", value: "older" });
    expect(await waiting).toEqual({ kind: "value", value: "older" });
    expect(failing.started.length).toBe(1);

    const slow = gatedRead<string>();
    const startedAt = Date.now();
    const first = await feed.first("sale-1", slow.read);
    expect(first).toEqual({ kind: "value", value: "older" });
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    slow.started[0]?.("newer"); // lands later: kept for the feed
    await sleep(10);
    expect(feed.get("sale-1")).toBe("newer");
  });

  it("is unavailable when the read keeps failing with no recent snapshot", async () => {
    const feed = createSharedSnapshot<string>({ maxAgeMs: 250, takeOverMs: 300 });
    feed.put("sale-1", "ancient", Date.now() - RECENT_MS - 1_000);
    const error = new Error("redis down");
    const first = await feed.first("sale-1", async () => {
      throw error;
    });
    expect(first).toEqual({ kind: "unavailable", error });
  });

  it("reads again, one read at a time, when the read fails with no recent snapshot: nobody is refused", async () => {
    const feed = createSharedSnapshot<string>({ maxAgeMs: 250 });
    const gate = gatedRead<string>();
    const openings = Array.from({ length: 200 }, () => feed.first("sale-1", gate.read));
    await sleep(30);
    expect(gate.started.length).toBe(1);
    gate.started[0]?.(new Error("redis timed out"));
    await sleep(200);
    expect(gate.started.length).toBe(2); // one opening reads again; the rest wait for it
    gate.started[1]?.("frame");
    const firsts = await Promise.all(openings);
    expect(firsts.every((f) => f.kind === "value" && f.value === "frame")).toBe(true);
    expect(gate.started.length).toBe(2);
  });

  it("gives up on a store that keeps failing once an opening's own wait has run out", async () => {
    const feed = createSharedSnapshot<string>({ maxAgeMs: 250, takeOverMs: 300 });
    let reads = 0;
    const startedAt = Date.now();
    const firsts = await Promise.all(
      Array.from({ length: 20 }, () =>
        feed.first("sale-1", async () => {
          reads++;
          await sleep(40);
          throw new Error("redis down");
        }),
      ),
    );
    expect(firsts.every((f) => f.kind === "unavailable")).toBe(true);
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    expect(reads).toBeLessThanOrEqual(20);
  });

  it("reads a key that fails at once about once per pause, not once per waiting opening", async () => {
    const feed = createSharedSnapshot<string>({ maxAgeMs: 250, takeOverMs: 600 });
    let reads = 0;
    const firsts = await Promise.all(
      Array.from({ length: 300 }, () =>
        feed.first("sale-1", async () => {
          reads++;
          throw new Error("redis refused");
        }),
      ),
    );
    expect(firsts.every((f) => f.kind === "unavailable")).toBe(true);
    // 600 ms of waiting, one read per 100 ms pause (and the first): never one per opening
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(reads).toBeLessThanOrEqual(10);
  });

  it("remembers a bounded number of ends, however many unknown keys are opened", async () => {
    const reads = createFirstReads();
    const held = { entry: () => undefined, put: () => {} };
    for (let i = 0; i < 3_000; i++)
      await firstValue(held, reads, `nope-${i}`, async () => undefined, { maxAgeMs: 250, takeOverMs: 5_000 });
    expect(reads.ended.size).toBeLessThanOrEqual(1_024);
    expect(reads.reading.size).toBe(0);
  });
});
