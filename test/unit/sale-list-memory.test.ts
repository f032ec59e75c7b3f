import { describe, expect, it } from "vitest";
import { readSaleList } from "../../src/catalog/sale-store";
import { createMemory } from "../../src/memory/memory";
import type { RedisStore } from "../../src/stores/redis-store";

/** A store holding no sales whose SMEMBERS answers after `ms` (or fails): only its reads are counted. */
function slowStore(ms: number, fail = () => false) {
  const calls = { smembers: 0 };
  // the list's first read: one pipeline of SMEMBERS and the catalog's version
  const pipeline = () => {
    const p = {
      smembers: () => p,
      get: () => p,
      exec: async () => {
        calls.smembers++;
        await new Promise((r) => setTimeout(r, ms));
        if (fail()) throw new Error("store down");
        return [[], "1"];
      },
    };
    return p;
  };
  const redis = { pipeline } as unknown as RedisStore;
  return { redis, calls };
}

describe("the process's sale list", () => {
  it("a crowd arriving after a quiet spell (list older than 5 s) costs one read", async () => {
    const { redis, calls } = slowStore(50);
    const memory = createMemory({ saleFeedMs: 250, orderFeedMs: 500 });
    memory.saleList.cached = { at: Date.now() - 6_000, sales: [], lost: [] };
    const now = Date.now();
    await Promise.all(Array.from({ length: 30 }, () => readSaleList({ redis, memory }, now)));
    expect(calls.smembers).toBe(1);
  });

  it("a crowd at a process's first request costs one read", async () => {
    const { redis, calls } = slowStore(50);
    const memory = createMemory({ saleFeedMs: 250, orderFeedMs: 500 });
    const now = Date.now();
    const lists = await Promise.all(Array.from({ length: 30 }, () => readSaleList({ redis, memory }, now)));
    expect(lists).toHaveLength(30);
    expect(calls.smembers).toBe(1);
  });

  it("a failing store is read one request at a time, and every request gets its error or a list", async () => {
    let failing = true;
    const { redis, calls } = slowStore(30, () => failing);
    const memory = createMemory({ saleFeedMs: 250, orderFeedMs: 500 });
    const now = Date.now();
    const crowd = Array.from({ length: 20 }, () => readSaleList({ redis, memory }, now));
    setTimeout(() => {
      failing = false;
    }, 100);
    const ends = await Promise.allSettled(crowd);
    expect(ends.filter((e) => e.status === "rejected").length).toBeGreaterThan(0);
    expect(ends.filter((e) => e.status === "fulfilled").length).toBeGreaterThan(0);
    // one read at a time: about one per 30 ms while it fails, then one that succeeds for the rest
    expect(calls.smembers).toBeLessThanOrEqual(6);
  });
});
