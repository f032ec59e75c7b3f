import type { Redis } from "@upstash/redis/cloudflare";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { countSoldOutFromMemory } from "../../src/buy/sold-out-answers";
import { createMemory, type Memory } from "../../src/memory/memory";
import { saleKeys } from "../../src/stock/keys";

/** A pipeline that records the commands each exec sends. */
function recordingRedis() {
  const writes: [string, string, number][][] = [];
  const redis = {
    pipeline() {
      const sent: [string, string, number][] = [];
      const pipe = {
        hincrby: (key: string, field: string, n: number) => {
          sent.push([key, field, n]);
          return pipe;
        },
        expire: () => pipe,
        exec: async () => {
          writes.push(sent);
          return [];
        },
      };
      return pipe;
    },
  } as unknown as Redis;
  return { redis, writes };
}

describe("sold-out answers from memory in the operator's timeline", () => {
  let memory: Memory;
  beforeEach(() => {
    vi.useFakeTimers();
    memory = createMemory({ saleFeedMs: 250, orderFeedMs: 500 });
  });
  afterEach(() => vi.useRealTimers());

  it("counts every answer, in at most one write a second per isolate, none on the answer's path", async () => {
    const { redis, writes } = recordingRedis();
    const deferred: Promise<unknown>[] = [];
    const defer = (p: Promise<unknown>) => deferred.push(p);
    const d = { redis, memory, defer };
    const t0 = 1_700_000_000_000;
    vi.setSystemTime(t0);
    for (let i = 0; i < 25; i++) countSoldOutFromMemory(d, "s1", t0 + i);
    countSoldOutFromMemory(d, "s2", t0 + 30);
    expect(writes).toHaveLength(0);
    expect(deferred).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(0);
    await Promise.all(deferred);
    const second = Math.floor(t0 / 1000);
    expect(writes).toEqual([
      [
        [saleKeys("s1").timeline, `${second}:10`, 25],
        [saleKeys("s2").timeline, `${second}:10`, 1],
      ],
    ]);
    // the next answers wait until a second after that write (answered at +100 ms: 900 ms), then go
    // in one more write
    countSoldOutFromMemory(d, "s1", t0 + 100);
    countSoldOutFromMemory(d, "s1", t0 + 200);
    expect(deferred).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(899);
    expect(writes).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await Promise.all(deferred);
    expect(writes[1]).toEqual([[saleKeys("s1").timeline, `${second}:10`, 2]]);
  });
});
