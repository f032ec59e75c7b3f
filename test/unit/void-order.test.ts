import type { Redis } from "@upstash/redis/cloudflare";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createMemory } from "../../src/memory/memory";
import { ScriptCode } from "../../src/stock/codes";
import { encodeLedgerEntry } from "../../src/stock/ledger-entry";

const enqueueVoid = vi.fn(async () => {});
vi.mock("../../src/orders/enqueue-order", () => ({ enqueueVoid }));
const { resolveUnanswered } = await import("../../src/buy/void-attempt");

const req = {
  saleId: "s00000000001",
  orderId: "s00000000001-aaaaaaaaaaaaaaaaaaaa",
  userId: "u",
  quantity: 1,
  idempotencyKey: "k",
};

/** A Redis whose void script answers `reply` (an Error: no reply). */
function deps(reply: unknown[] | Error) {
  const redis = {
    evalsha: async () => {
      if (reply instanceof Error) throw reply;
      return reply;
    },
  } as unknown as Redis;
  const memory = createMemory({ saleFeedMs: 250, orderFeedMs: 500 });
  return { redis, db: {} as never, now: 1_800_000_000_000, config: {} as never, qstash: {} as never, memory };
}

afterEach(() => {
  enqueueVoid.mockReset();
  vi.restoreAllMocks();
});

describe("resolveUnanswered: the buy route's last step for an attempt no run answered", () => {
  it("Redis answers: nothing was reserved (tombstone), no job", async () => {
    expect(await resolveUnanswered(deps([ScriptCode.NOT_RESERVED, ""]), req)).toEqual({ kind: "voided" });
    expect(enqueueVoid).not.toHaveBeenCalled();
  });

  it("a keyed retry claimed the reservation: the route answers with that order", async () => {
    const entry = encodeLedgerEntry({
      type: "reserve",
      orderId: req.orderId,
      userId: "u",
      quantity: 1,
      before: 3,
      after: 2,
      at: 5,
      expiresAt: 9,
      epoch: 2,
      claimed: true,
    });
    expect(await resolveUnanswered(deps([ScriptCode.CLAIMED, entry]), req)).toEqual({
      kind: "claimed",
      order: { ...req, idempotencyKey: undefined, createdAt: 5, expiresAt: 9, epoch: 2 },
    });
  });

  it("Redis still silent, or the sale not there: the void goes to QStash, the answer is 503", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    expect(await resolveUnanswered(deps(new Error("timeout")), req)).toEqual({ kind: "voided" });
    expect(await resolveUnanswered(deps([ScriptCode.NOT_INITIALISED, ""]), req)).toEqual({ kind: "voided" });
    expect(enqueueVoid).toHaveBeenCalledTimes(2);
    expect(enqueueVoid).toHaveBeenCalledWith(expect.objectContaining({ qstash: {} }), req);
  });

  it("QStash unreachable too: still 503, and the double failure is logged", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    enqueueVoid.mockRejectedValueOnce(new Error("qstash down"));
    expect(await resolveUnanswered(deps(new Error("timeout")), req)).toEqual({ kind: "voided" });
    expect(String(logged.mock.calls[0]?.[0])).toMatch(/could not be handed to QStash/);
  });
});
