import type { Redis } from "ioredis";
import { beforeEach, describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { openRoomKeys } from "../../../src/stock/open-room";
import type { StoredTicket } from "../../../src/stock/room-step";
import { roomStepKeys } from "../../../src/stock/room-step";
import { initSale, lua, sealRoom } from "../../support/lua";
import { redisServerForFile } from "../../support/redis-per-file";

/*
 * Two rebuilds of one queue sale whose steps interleave (the operator's POST rebuild takes no lock; the
 * recovery does): src/recovery/rebuild.ts runs open-room.lua, which moves the running admissions by the
 * quiet period less what meta's recoveringUntil covers, and only then replaceSaleState, which writes
 * recoveringUntil. Both open-room runs happen before either meta write, so each moves the admissions by
 * its whole quiet period: a shopper's admission gains the two periods' sum, not their union, and its
 * units stay held from the next ticket that long.
 */

let redis: Redis;
const t0 = 1_800_000_000_000;
const WINDOW = 120_000;
const GRACE = 10_000;
const QUIET = 10_000;
let saleId = "";

redisServerForFile((connection) => {
  redis = connection;
});
beforeEach(() => {
  saleId = `s${Math.random().toString(36).slice(2, 13).padEnd(11, "0")}`;
});

async function step(now: number, o: { join?: string; paid?: number } = {}) {
  const keys = roomStepKeys(saleId);
  const args = [now, o.join ?? "", `t-${o.join ?? ""}`, WINDOW, GRACE, o.paid ?? -1, o.join ?? ""];
  return redis.eval(lua("room-step"), keys.length, ...keys, ...args.map(String));
}

/** open-room.lua with rebuild.ts's arguments: the room kept, a quiet period [from, from + QUIET). */
async function openRoomOfRebuild(from: number) {
  const keys = openRoomKeys(saleId);
  const admitFrom = from + WINDOW + GRACE;
  const args = ["cd".repeat(32), "y", String(admitFrom), String(from), String(from + QUIET)];
  return redis.eval(lua("open-room"), keys.length, ...keys, ...args);
}

async function ticketOf(userId: string): Promise<StoredTicket> {
  return JSON.parse((await redis.hget(saleKeys(saleId).tickets, userId)) ?? "null") as StoredTicket;
}

describe("two rebuilds whose steps interleave", () => {
  it("move a running admission by the union of their quiet periods, not by their sum", async () => {
    await initSale(redis, saleId, { stock: 2, perUserLimit: 1, startsAt: t0, endsAt: t0 + 3_600_000 });
    await redis.hset(saleKeys(saleId).meta, "admission", "queue");
    await redis.hset(saleKeys(saleId).room, "seed", "ab".repeat(32), "seedHash", "x");
    for (const u of ["a", "b", "c"]) expect(await step(t0 - 1000, { join: u })).toBeTruthy();
    expect(await sealRoom(redis, saleId, t0)).toBe(1);
    await step(t0, { paid: 0 });
    const [first] = await redis.lrange(saleKeys(saleId).line, 0, 0);
    const before = (await ticketOf(first as string)).x;
    expect(before).toBe(t0 + WINDOW);

    // rebuild A (epoch e+1) and rebuild B (epoch e+2), 1 s apart: each opens the room, then each
    // replaces the sale's state, which writes meta recoveringUntil (rebuild-sale.lua)
    const a = t0 + 1_000;
    const b = t0 + 2_000;
    await openRoomOfRebuild(a);
    await openRoomOfRebuild(b);
    await redis.hset(saleKeys(saleId).meta, "recoveringUntil", String(a + QUIET));
    await redis.hset(saleKeys(saleId).meta, "recoveringUntil", String(b + QUIET));

    // nobody could buy during [a, b + QUIET): 11 s; the admission's end moves by that, once
    expect((await ticketOf(first as string)).x).toBe(before + (b + QUIET - a));
  });
});
