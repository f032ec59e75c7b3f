import type { Redis } from "@upstash/redis/cloudflare";
import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../src/errors";
import { RESOLVE_WINDOW_MS, reserveStock } from "../../src/stock/reserve";

const request = {
  saleId: "s00000000001",
  orderId: "s00000000001-aaaaaaaaaaaaaaaaaaaa",
  userId: "u",
  ip: "1.2.3.4",
  quantity: 1,
  idempotencyKey: "k",
  now: 1_800_000_000_000,
};
const limits = { userPerWindow: 10, ipPerWindow: 10, windowMs: 1000 };

/** A Redis whose script runs answer from `replies` in turn (an Error is a run without a reply). */
function fakeRedis(replies: (unknown[] | Error)[]) {
  const runs: string[][] = [];
  const redis = {
    evalsha: async (_sha1: string, keys: string[], args: string[]) => {
      runs.push([...keys, ...args]);
      const next = replies.shift();
      if (next === undefined || next instanceof Error) throw next ?? new Error("timeout");
      return next;
    },
  } as unknown as Redis;
  return { redis, runs };
}

function fakeClock() {
  let t = 0;
  return {
    now: () => t,
    sleep: async (ms: number) => {
      t += ms;
    },
  };
}

describe("reserveStock resolves a run without a reply by running the same attempt again", () => {
  it("re-runs with the same order id, key and time until a run is answered", async () => {
    const { redis, runs } = fakeRedis([
      new Error("timeout"),
      new Error("503"),
      [1, request.orderId, 1, 9, 4, 1, 1, 1],
    ]);
    const outcome = await reserveStock(redis, request, limits, fakeClock());
    expect(outcome).toMatchObject({
      kind: "reserved",
      orderId: request.orderId,
      replay: true,
      pending: true,
    });
    expect(runs).toHaveLength(3);
    // the same keys and arguments, except the last: the re-runs say they are re-runs
    expect(new Set(runs.map((r) => JSON.stringify(r.slice(0, -1)))).size).toBe(1);
    expect(runs.map((r) => r.at(-1))).toEqual(["0", "1", "1"]);
  });

  it("answers 503 only once no run was answered for the whole window", async () => {
    const clock = fakeClock();
    const replies = Array.from({ length: 100 }, () => new Error("unreachable"));
    const { redis, runs } = fakeRedis(replies);
    await expect(reserveStock(redis, request, limits, clock)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(clock.now()).toBeGreaterThan(RESOLVE_WINDOW_MS - 1_000);
    expect(clock.now()).toBeLessThan(RESOLVE_WINDOW_MS);
    expect(runs.length).toBeGreaterThan(3);
  });

  it("a rejection is an answer too: no re-run", async () => {
    const { redis, runs } = fakeRedis([[10]]);
    expect(await reserveStock(redis, request, limits, fakeClock())).toEqual({ kind: "sold_out" });
    expect(runs).toHaveLength(1);
  });
});
