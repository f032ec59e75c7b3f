import type { Redis } from "ioredis";
import { beforeEach, describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { pauseKeys } from "../../../src/stock/pause";
import type { StoredTicket } from "../../../src/stock/room-step";
import { roomStepKeys } from "../../../src/stock/room-step";
import { initSale, lua, sealRoom } from "../../support/lua";
import { redisServerForFile } from "../../support/redis-per-file";

/*
 * An operator's pause that lands in Redis while a rebuild runs (after advanceEpoch read the sale
 * unpaused, before its open-room.lua): open-room sees the pause and moves nothing, leaving the quiet
 * period to the resume; the rebuild's meta (rebuild-sale.lua) then says unpaused, with the version it
 * read; rebuild-followup.ts replays the newer pause through set-sale-paused.lua, which finds the sale
 * not paused and notes pausedAt afresh at the quiet period's end. The resume then moves the admission
 * by (resume - quiet end) only: the pause's start and the quiet period are lost, and the admission
 * lapses that much early, its units handed to the next ticket, as before a71abfc.
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

/** set-sale-paused.lua with src/stock/pause.ts's layout. */
async function setPaused(paused: boolean, version: number, now: number) {
  const keys = pauseKeys(saleId);
  return redis.eval(
    lua("set-sale-paused"),
    keys.length,
    ...keys,
    paused ? "1" : "0",
    String(version),
    String(now),
  );
}

async function ticketOf(userId: string): Promise<StoredTicket> {
  return JSON.parse((await redis.hget(saleKeys(saleId).tickets, userId)) ?? "null") as StoredTicket;
}

describe("a pause that lands while a rebuild runs", () => {
  it("moves the running admission by all the time nobody could buy: the pause and the quiet period", async () => {
    await initSale(redis, saleId, { stock: 2, perUserLimit: 1, startsAt: t0, endsAt: t0 + 3_600_000 });
    await redis.hset(saleKeys(saleId).meta, "admission", "queue");
    await redis.hset(saleKeys(saleId).room, "seed", "ab".repeat(32), "seedHash", "x");
    for (const u of ["a", "b", "c"]) await step(t0 - 1000, { join: u });
    expect(await sealRoom(redis, saleId, t0)).toBe(1);
    await step(t0, { paid: 0 });
    const [first] = (await redis.lrange(saleKeys(saleId).line, 0, 0)) as [string];
    expect((await ticketOf(first)).x).toBe(t0 + WINDOW);

    // the rebuild read the sale unpaused at pause_version 0 (advanceEpoch); the operator's pause (v1)
    // commits after it and reaches Redis at p
    const p = t0 + 1_000;
    expect(await setPaused(true, 1, p)).toBe(1);
    // the rebuild's open-room.lua (src/recovery/rebuild.ts), quiet period [q, q + QUIET)
    const q = t0 + 2_000;
    const k = saleKeys(saleId);
    await redis.eval(
      lua("open-room"),
      4,
      k.room,
      k.meta,
      k.tickets,
      k.active,
      "cd".repeat(32),
      "y",
      "0",
      String(q),
      String(q + QUIET),
    );
    // replaceSaleState: the meta as Postgres was read (rebuild-state.ts: paused, pauseVersion, recoveringUntil)
    await redis.hset(k.meta, "paused", "0", "pauseVersion", "0", "recoveringUntil", String(q + QUIET));
    // settleKeptOrders: Postgres's pause_version (1) is newer than the one read: the pause again
    expect(await setPaused(true, 1, q + 100)).toBe(1);
    // the operator resumes (v2) at r
    const r = t0 + 30_000;
    expect(await setPaused(false, 2, r)).toBe(1);

    // nobody could buy from p to r: the admission's end moves by r - p
    expect((await ticketOf(first)).x).toBe(t0 + WINDOW + (r - p));
  });
});
