import type { Redis } from "@upstash/redis/cloudflare";
import { describe, expect, it } from "vitest";
import {
  buildTokenFilter,
  CatalogMissingError,
  noticeCatalogLoss,
  resolveProductToken,
} from "../../src/catalog/catalog";
import { createMemory } from "../../src/memory/memory";
import { catalogKeys } from "../../src/stock/keys";

/** A Redis holding only the catalog's keys, answering the commands the catalog sends. */
type CatalogState = { version: string | null; restoring: string | null; tokens: Map<string, string> };

function catalogRedis(state: CatalogState) {
  const value = (key: string) =>
    key === catalogKeys.version
      ? state.version
      : key === catalogKeys.restoring
        ? state.restoring
        : key === catalogKeys.bloom && state.version !== null
          ? buildTokenFilter([...state.tokens.keys()])
          : null;
  const redis = {
    pipeline: () => {
      const replies: (() => unknown)[] = [];
      const queue = (reply: () => unknown) => {
        replies.push(reply);
        return p;
      };
      const p = {
        get: (key: string) => queue(() => value(key)),
        hget: (_key: string, t: string) => queue(() => state.tokens.get(t) ?? null),
        hlen: () => queue(() => state.tokens.size),
        exec: async () => replies.map((r) => r()),
      };
      return p;
    },
    hgetall: async () => [...state.tokens].flat(),
    get: async (key: string) => value(key),
  } as unknown as Redis;
  return redis;
}

const token = (c: string) => c.repeat(43);

describe("the catalog after Redis lost its data", () => {
  it("once the loss is seen, a token it misses is 503 while the catalog is gone, never 404 from memory", async () => {
    const state: CatalogState = { version: "3", restoring: null, tokens: new Map([[token("a"), "sale-a"]]) };
    const memory = createMemory({ saleFeedMs: 250, orderFeedMs: 500 });
    const d = { redis: catalogRedis(state), memory, defer: () => {} };
    const opts = { now: 1_000, refreshMs: 60_000 };
    expect(await resolveProductToken(d, token("a"), opts)).toBe("sale-a");
    expect(await resolveProductToken(d, token("b"), opts)).toBeNull(); // not a sale: 404 from memory

    state.version = null;
    state.tokens.clear();
    noticeCatalogLoss(memory.catalog); // a buy found a sale's state gone
    expect(await resolveProductToken(d, token("a"), opts)).toBe("sale-a");
    await expect(resolveProductToken(d, token("b"), opts)).rejects.toBeInstanceOf(CatalogMissingError);

    // restored (the version starting over, here back at the one held), with a sale another process made
    state.restoring = "lock";
    state.version = "3";
    state.tokens.set(token("a"), "sale-a").set(token("b"), "sale-b");
    await expect(resolveProductToken(d, token("c"), opts)).rejects.toBeInstanceOf(CatalogMissingError);
    expect(await resolveProductToken(d, token("b"), opts)).toBe("sale-b");
  });

  it("a catalog held as missing sales is loaded again once no restore runs, whatever its version", async () => {
    const state: CatalogState = { version: "3", restoring: null, tokens: new Map([[token("a"), "sale-a"]]) };
    const memory = createMemory({ saleFeedMs: 250, orderFeedMs: 500 });
    const pending: Promise<unknown>[] = [];
    const d = { redis: catalogRedis(state), memory, defer: (p: Promise<unknown>) => void pending.push(p) };
    await resolveProductToken(d, token("a"), { now: 1_000, refreshMs: 5_000 });
    noticeCatalogLoss(memory.catalog);
    state.tokens.set(token("b"), "sale-b"); // restored at the same version, with one more sale
    await resolveProductToken(d, token("a"), { now: 7_000, refreshMs: 5_000 });
    await Promise.all(pending);
    expect(memory.catalog.loaded?.partial).toBe(false);
    expect(memory.catalog.loaded?.exact?.get(token("b"))).toBe("sale-b");
  });
});
