import { describe, expect, it } from "vitest";
import { refusalFromMemory } from "../../src/buy/refusal-from-memory";
import type { Config } from "../../src/env";
import { createMemory } from "../../src/memory/memory";
import type { RedisStore } from "../../src/stores/redis-store";

const TOKEN = "a".repeat(43);
const OTHER = "b".repeat(43);
const NOW = 1_800_000_000_000;
const config = { CATALOG_REFRESH_MS: 5_000, STORE_CLOCK_REFRESH_MS: 60_000 } as Config;

function setUp() {
  const memory = createMemory({ saleFeedMs: 250, orderFeedMs: 500 });
  memory.catalog.loaded = {
    filter: null,
    version: "1",
    checkedAt: NOW,
    partial: false,
    exact: new Map([[TOKEN, "sale-1"]]),
  };
  memory.storeClock.offset = { ms: 0, measuredAt: NOW };
  const deferred: Promise<unknown>[] = [];
  const d = {
    config,
    memory,
    redis: {} as RedisStore,
    defer: (p: Promise<unknown>) => {
      deferred.push(p.catch(() => undefined));
    },
  };
  return { d, memory, deferred };
}

describe("a buy's refusals from memory (runtime/buy-front-door.ts)", () => {
  it("answers a token not in the catalog 404 and a sale known sold out 410, and nothing else", () => {
    const { d, memory } = setUp();
    expect(refusalFromMemory(d, OTHER, NOW)).toBe("unknown_product");
    expect(refusalFromMemory(d, "not-a-token", NOW)).toBe("unknown_product");
    expect(refusalFromMemory(d, TOKEN, NOW)).toBeNull();
    memory.soldOut.mark("sale-1", NOW, 1_000);
    expect(refusalFromMemory(d, TOKEN, NOW + 999)).toBe("sold_out");
    // an admitted buy's units are held: never a 410 from memory, but an unknown product is still 404
    expect(refusalFromMemory(d, TOKEN, NOW + 999, { admitted: true })).toBeNull();
    expect(refusalFromMemory(d, OTHER, NOW + 999, { admitted: true })).toBe("unknown_product");
    expect(memory.soldOutAnswers.pending.get("sale-1")?.size).toBe(1);
  });

  it("leaves to the full attempt whatever needs a store: no catalog, a catalog or clock due for a check", () => {
    const { d, memory } = setUp();
    memory.soldOut.mark("sale-1", NOW, 600_000);
    expect(refusalFromMemory(d, TOKEN, NOW + 5_000)).toBeNull(); // catalog due for its version check
    expect(refusalFromMemory(d, OTHER, NOW + 5_000)).toBeNull();
    memory.catalog.loaded = {
      filter: null,
      version: "1",
      checkedAt: NOW + 60_001,
      partial: false,
      exact: new Map([[TOKEN, "sale-1"]]),
    };
    expect(refusalFromMemory(d, TOKEN, NOW + 60_002)).toBeNull(); // store clock due for its refresh
    // loaded while lost sales were being restored: a token it lacks may be a sale's (503 on the full path)
    memory.catalog.loaded = { filter: null, version: "1", checkedAt: NOW, partial: true, exact: null };
    expect(refusalFromMemory(d, OTHER, NOW)).toBeNull();
    memory.catalog.loaded = null;
    expect(refusalFromMemory(d, TOKEN, NOW)).toBeNull();
  });

  it("does not take the recheck of an expired sold-out memory: the full attempt still goes to Redis once", () => {
    const { d, memory } = setUp();
    memory.soldOut.mark("sale-1", NOW, 1_000);
    expect(refusalFromMemory(d, TOKEN, NOW + 1_000)).toBeNull();
    expect(refusalFromMemory(d, TOKEN, NOW + 1_000)).toBeNull();
    // the first full attempt gets the recheck (false), the next ones the lease's 410
    expect(memory.soldOut.has("sale-1", NOW + 1_000)).toBe(false);
    expect(memory.soldOut.has("sale-1", NOW + 1_001)).toBe(true);
    expect(refusalFromMemory(d, TOKEN, NOW + 1_001)).toBe("sold_out");
  });
});
