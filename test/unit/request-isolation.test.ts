import type { Redis } from "@upstash/redis/cloudflare";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { buildTokenFilter, resolveProductToken } from "../../src/catalog/catalog";
import { createMemory, type Memory } from "../../src/memory/memory";
import { enqueueOrders } from "../../src/orders/enqueue-order";
import { publishSoon } from "../../src/orders/publish-buffer";
import type { PublishDeps } from "../../src/services";
import type { QueuedOrder } from "../../src/stock/queued-order";
import { storeNow } from "../../src/stores/store-clock";

vi.mock("../../src/orders/enqueue-order", () => ({ enqueueOrders: vi.fn() }));

/**
 * On Workers no request may wait on another request's I/O: workerd cancels the waiting request ("code
 * had hung", "Cannot perform I/O on behalf of a different request") and the shopper gets a 500, and a
 * request whose own I/O is cancelled (its shopper went away) must not take others down with it. Each
 * test gives the first request I/O that never finishes, as a cancelled request's does, and checks that
 * a second, concurrent request finishes on its own I/O.
 */

const never = () => new Promise<never>(() => {});
const WAITING = Symbol("still waiting on the first request");
/** The value of `p`, or WAITING if it is still pending after every other pending callback has run. */
async function settledOrWaiting<T>(p: Promise<T>): Promise<T | typeof WAITING> {
  return Promise.race([p, new Promise<typeof WAITING>((r) => setTimeout(() => r(WAITING), 50))]);
}
const noDefer = () => {};

describe("no request waits on another request's I/O", () => {
  let memory: Memory;
  beforeEach(() => {
    memory = createMemory({ saleFeedMs: 250, orderFeedMs: 500 });
  });

  it("store clock: a cold isolate's second request measures for itself", async () => {
    let calls = 0;
    const redis = {
      time: () => (++calls === 1 ? never() : Promise.resolve([1_800_000_000, 0])),
    } as unknown as Redis;
    const d = { redis, memory, defer: noDefer };
    void storeNow(d, { localNow: () => 1_800_000_000_000 });
    const second = storeNow(d, { localNow: () => 1_800_000_000_000 });
    expect(await settledOrWaiting(second)).toBe(1_800_000_000_000);
  });

  it("catalog: a cold isolate's second request loads the catalog for itself", async () => {
    const token = "t".repeat(43);
    let loads = 0;
    const redis = {
      pipeline: () => {
        let lookup = false;
        const p = {
          get: () => p,
          hget: () => {
            lookup = true;
            return p;
          },
          exec: () => {
            if (lookup) return Promise.resolve(["sale-1", null]);
            return ++loads === 1 ? never() : Promise.resolve([buildTokenFilter([token]), "7", null]);
          },
        };
        return p;
      },
      get: () => Promise.resolve("7"),
    } as unknown as Redis;
    const d = { redis, memory, defer: noDefer };
    const opts = { now: 1_000, refreshMs: 5_000 };
    void resolveProductToken(d, token, opts);
    expect(await settledOrWaiting(resolveProductToken(d, token, opts))).toBe("sale-1");
  });

  it("publish batch: the opening request sends it; a joining request does not wait on that send", async () => {
    let send: () => void = () => {};
    vi.mocked(enqueueOrders).mockImplementation(() => new Promise<void>((r) => (send = r)));
    const order = (orderId: string): QueuedOrder => ({
      orderId,
      saleId: "s",
      userId: orderId,
      quantity: 1,
      createdAt: 0,
      expiresAt: 1,
      epoch: 1,
    });
    const publisher = { memory } as PublishDeps & { memory: Memory };
    const owner = publishSoon(publisher, order("a"));
    const joiner = publishSoon(publisher, order("b"));
    expect(await settledOrWaiting(joiner)).toBeUndefined();
    expect(await settledOrWaiting(owner)).toBe(WAITING);
    expect(vi.mocked(enqueueOrders).mock.calls.map(([, orders]) => orders.map((o) => o.orderId))).toEqual([
      ["a", "b"],
    ]);
    send();
    expect(await settledOrWaiting(owner)).toBeUndefined();
  });
});
