import type { Redis } from "@upstash/redis/cloudflare";
import { beforeEach, describe, expect, it } from "vitest";
import { createMemory, type Memory } from "../../src/memory/memory";
import { storeNow } from "../../src/stores/store-clock";

/** A stand-in whose TIME runs `skewMs` ahead of the local clock and takes `rttMs` to answer. */
function fakeRedis(clock: { now: number }, skewMs: number, rttMs: number) {
  let calls = 0;
  const redis = {
    async time() {
      calls++;
      clock.now += rttMs / 2;
      const store = clock.now + skewMs;
      clock.now += rttMs / 2;
      return [Math.floor(store / 1000), (store % 1000) * 1000];
    },
  } as unknown as Redis;
  return { redis, calls: () => calls };
}

describe("storeNow", () => {
  let memory: Memory;
  const fresh = () => createMemory({ saleFeedMs: 250, orderFeedMs: 500 });
  beforeEach(() => {
    memory = fresh();
  });

  it("follows the store's clock, not a worker clock that runs fast or slow", async () => {
    for (const skew of [-5_000, 0, 7_000]) {
      memory = fresh();
      const clock = { now: 1_800_000_000_000 };
      const { redis } = fakeRedis(clock, skew, 20);
      const now = await storeNow({ redis, memory, defer: () => {} }, { localNow: () => clock.now });
      expect(Math.abs(now - (clock.now + skew))).toBeLessThanOrEqual(20);
    }
  });

  it("measures once, then refreshes in the background after a minute", async () => {
    const clock = { now: 1_800_000_000_000 };
    const { redis, calls } = fakeRedis(clock, 3_000, 10);
    const deferred: Promise<unknown>[] = [];
    const defer = (p: Promise<unknown>) => deferred.push(p);
    await storeNow({ redis, memory, defer: defer }, { localNow: () => clock.now });
    clock.now += 30_000;
    await storeNow({ redis, memory, defer: defer }, { localNow: () => clock.now });
    expect(calls()).toBe(1);
    clock.now += 31_000;
    await storeNow({ redis, memory, defer: defer }, { localNow: () => clock.now });
    await Promise.all(deferred);
    expect(calls()).toBe(2);
  });

  it("refreshes after the configured interval, once, in the deferring request's background", async () => {
    const clock = { now: 1_800_000_000_000 };
    const { redis, calls } = fakeRedis(clock, 3_000, 10);
    const deferred: Promise<unknown>[] = [];
    const opts = { localNow: () => clock.now, refreshMs: 200 };
    await storeNow({ redis, memory, defer: (p) => deferred.push(p) }, opts);
    clock.now += 201;
    await storeNow({ redis, memory, defer: (p) => deferred.push(p) }, opts);
    await storeNow({ redis, memory, defer: (p) => deferred.push(p) }, opts);
    await Promise.all(deferred);
    expect([calls(), deferred.length]).toEqual([2, 1]);
  });

  it("falls back to the local clock when the store cannot be asked", async () => {
    const redis = { time: async () => Promise.reject(new Error("down")) } as unknown as Redis;
    expect(await storeNow({ redis, memory, defer: () => {} }, { localNow: () => 42_000 })).toBe(42_000);
  });
});
