import { Redis } from "ioredis";
import { beforeEach, describe, expect, it } from "vitest";
import type { RedisProcess } from "../../../local/redis-process";
import { ScriptCode as C } from "../../../src/stock/codes";
import { saleKeys } from "../../../src/stock/keys";
import {
  encodeLedgerEntry,
  type LedgerEntry,
  ledgerFieldOf,
  parseLedgerEntry,
  type ReservationEntry,
} from "../../../src/stock/ledger-entry";
import { initSale, lua, rebuild, reserve, restore, voidReservation } from "../../support/lua";
import { redisServerForFile } from "../../support/redis-per-file";

let server: RedisProcess;
let redis: Redis;
const now = 1_800_000_000_000;
let saleId = "";
let n = 0;
const order = () => `o${++n}`;

redisServerForFile((connection, started) => {
  redis = connection;
  server = started;
});
beforeEach(async () => {
  saleId = `s${Math.random().toString(36).slice(2, 13).padEnd(11, "0")}`;
});

describe("reserve-stock.lua against a real redis-server", () => {
  it("walks seed 000: stock 5, limit 2 — 101 buys 2, again, 102 buys 2, 103 asks 3, then 2", async () => {
    await initSale(redis, saleId, { stock: 5, perUserLimit: 2, startsAt: now - 1000, endsAt: now + 60_000 });
    const first = await reserve(redis, saleId, { orderId: "a1", userId: "101", quantity: 2, now });
    expect(first).toEqual([1, "a1", 2, now + 60_000, 3, 1]);
    expect(await reserve(redis, saleId, { orderId: order(), userId: "101", quantity: 1, now })).toEqual([
      7, 2,
    ]);
    expect((await reserve(redis, saleId, { orderId: "a2", userId: "102", quantity: 2, now }))[0]).toBe(1);
    expect(await reserve(redis, saleId, { orderId: order(), userId: "103", quantity: 3, now })).toEqual([
      8, 2,
    ]);
    expect(await reserve(redis, saleId, { orderId: order(), userId: "103", quantity: 2, now })).toEqual([
      9, 1,
    ]);
    expect((await reserve(redis, saleId, { orderId: "a3", userId: "103", quantity: 1, now }))[0]).toBe(1);
    expect(await reserve(redis, saleId, { orderId: order(), userId: "104", quantity: 1, now })).toEqual([10]);
    expect(await redis.get(saleKeys(saleId).stock)).toBe("0");
  });

  it("answers window and pause codes and NOT_INITIALISED without creating stock", async () => {
    await initSale(redis, saleId, { stock: 5, perUserLimit: 2, startsAt: now, endsAt: now + 1000 });
    expect(
      await reserve(redis, saleId, { orderId: order(), userId: "u", quantity: 1, now: now - 1 }),
    ).toEqual([4]);
    expect(
      await reserve(redis, saleId, { orderId: order(), userId: "u", quantity: 1, now: now + 1000 }),
    ).toEqual([5]);
    await redis.hset(saleKeys(saleId).meta, "paused", "1");
    expect(await reserve(redis, saleId, { orderId: order(), userId: "u", quantity: 1, now })).toEqual([6]);
    const other = "snotthere00";
    expect(await reserve(redis, other, { orderId: order(), userId: "u", quantity: 1, now })).toEqual([2]);
    expect(await redis.exists(saleKeys(other).stock)).toBe(0);
  });

  it("rate limits per user and per IP with a retry time, before the sale checks", async () => {
    await initSale(redis, saleId, { stock: 100, perUserLimit: 50, startsAt: now - 1, endsAt: now + 60_000 });
    for (let i = 0; i < 3; i++) {
      expect(
        (await reserve(redis, saleId, { orderId: order(), userId: "rl", quantity: 1, now, userLimit: 3 }))[0],
      ).toBe(1);
    }
    const limited = await reserve(redis, saleId, {
      orderId: order(),
      userId: "rl",
      quantity: 1,
      now,
      userLimit: 3,
    });
    expect(limited[0]).toBe(3);
    expect(Number(limited[1])).toBeGreaterThan(0);
    expect(Number(limited[1])).toBeLessThanOrEqual(1000);
    const ip = "10.9.8.7";
    expect(
      (await reserve(redis, saleId, { orderId: order(), userId: "x1", quantity: 1, now, ip, ipLimit: 1 }))[0],
    ).toBe(1);
    expect(
      (await reserve(redis, saleId, { orderId: order(), userId: "x2", quantity: 1, now, ip, ipLimit: 1 }))[0],
    ).toBe(3);
  });

  it("replays the first answer for the same idempotency key and reserves once", async () => {
    await initSale(redis, saleId, { stock: 10, perUserLimit: 2, startsAt: now - 1, endsAt: now + 60_000 });
    const a = await reserve(redis, saleId, {
      orderId: "k1",
      userId: "u1",
      quantity: 1,
      now,
      idem: "click-1",
    });
    const b = await reserve(redis, saleId, {
      orderId: "k2",
      userId: "u1",
      quantity: 1,
      now: now + 5,
      idem: "click-1",
    });
    expect(b).toEqual([...a, 1, 1]);
    expect(await redis.get(saleKeys(saleId).stock)).toBe("9");
    // a rejection is replayed too
    await reserve(redis, saleId, { orderId: "k3", userId: "u1", quantity: 1, now });
    const r1 = await reserve(redis, saleId, {
      orderId: "k4",
      userId: "u1",
      quantity: 1,
      now,
      idem: "click-2",
    });
    expect(r1).toEqual([7, 2]);
    // given again, a refusal is marked as a replay (it says nothing about the sale now)
    expect(
      await reserve(redis, saleId, { orderId: "k4b", userId: "u1", quantity: 1, now, idem: "click-2" }),
    ).toEqual([7, 2, 1]);
    // same order id (a network retry of the same attempt) is a replay even without a key
    const c1 = await reserve(redis, saleId, { orderId: "k5", userId: "u2", quantity: 2, now });
    const c2 = await reserve(redis, saleId, { orderId: "k5", userId: "u2", quantity: 2, now });
    expect(c2).toEqual([...c1, 1, 1]);
    expect(await redis.get(saleKeys(saleId).stock)).toBe("6");
    // once the order is written (out of the outbox), a replay says nothing is pending
    await redis.zrem(saleKeys(saleId).outbox, "k1", "k5");
    expect(
      await reserve(redis, saleId, { orderId: "k6", userId: "u1", quantity: 1, now, idem: "click-1" }),
    ).toEqual([...a, 1, 0]);
    expect(await reserve(redis, saleId, { orderId: "k5", userId: "u2", quantity: 2, now })).toEqual([
      ...c1,
      1,
      0,
    ]);
  });

  it("counts a key's replay toward the rate limits, but not a re-run of the same order id", async () => {
    await initSale(redis, saleId, { stock: 10, perUserLimit: 2, startsAt: now - 1, endsAt: now + 60_000 });
    const attempt = { userId: "rr", quantity: 1, now, idem: "fixed", userLimit: 2 };
    const first = await reserve(redis, saleId, { ...attempt, orderId: "f1" });
    expect(first[0]).toBe(1);
    expect((await reserve(redis, saleId, { ...attempt, orderId: "f2" }))[0]).toBe(1);
    expect((await reserve(redis, saleId, { ...attempt, orderId: "f3" }))[0]).toBe(3);
    expect(
      (
        await reserve(redis, saleId, {
          ...attempt,
          orderId: "f4",
          ip: "10.0.0.9",
          userLimit: 1000,
          ipLimit: 0,
        })
      )[0],
    ).toBe(3);
    // the server re-running attempt f1 (its outcome unknown) is not a new attempt
    expect(await reserve(redis, saleId, { ...attempt, orderId: "f1" })).toEqual([...first, 1, 1]);
    expect(await redis.get(saleKeys(saleId).stock)).toBe("9");
  });

  it("keeps the idempotency answers of users a:x (key 1) and a (key x:1) apart", async () => {
    await initSale(redis, saleId, { stock: 10, perUserLimit: 2, startsAt: now - 1, endsAt: now + 60_000 });
    const one = await reserve(redis, saleId, { orderId: "c1", userId: "a:x", quantity: 1, now, idem: "1" });
    const two = await reserve(redis, saleId, { orderId: "c2", userId: "a", quantity: 1, now, idem: "x:1" });
    expect([one[0], one[1], two[0], two[1]]).toEqual([1, "c1", 1, "c2"]);
    expect(await redis.get(saleKeys(saleId).stock)).toBe("8");
  });

  it("writes the ledger entry, the queued order and the outbox entry with the reservation", async () => {
    await initSale(redis, saleId, {
      stock: 3,
      perUserLimit: 2,
      startsAt: now - 1,
      endsAt: now + 60_000,
      paymentWindowMs: 900_000,
    });
    await reserve(redis, saleId, { orderId: "L1", userId: "u9", quantity: 2, now });
    const k = saleKeys(saleId);
    const entry = parseLedgerEntry(await redis.hget(k.ledger, "r:L1"));
    expect(entry).toMatchObject({
      type: "reserve",
      orderId: "L1",
      userId: "u9",
      quantity: 2,
      before: 3,
      after: 1,
      at: now,
    });
    expect(JSON.parse((await redis.hget(k.orders, "L1")) ?? "{}")).toMatchObject({
      userId: "u9",
      quantity: 2,
      expiresAt: now + 900_000,
    });
    expect(await redis.zscore(k.outbox, "L1")).toBe(String(now));
    expect(await redis.hget(k.holdings, "u9")).toBe("2");
  });

  it("a re-run's refusal is final: an earlier run of the attempt arriving later reserves nothing", async () => {
    await initSale(redis, saleId, { stock: 3, perUserLimit: 2, startsAt: now - 1, endsAt: now + 60_000 });
    const k = saleKeys(saleId);
    const attempt = { userId: "late", quantity: 1, now };
    // run 1 gets no reply and is still on its way; run 2 (the server's re-run) is refused: paused
    await redis.hset(k.meta, "paused", "1");
    expect(await reserve(redis, saleId, { ...attempt, orderId: "F1", rerun: true })).toEqual([6]);
    await redis.hset(k.meta, "paused", "0");
    // the shopper was told 409 SALE_PAUSED; run 1 lands now
    expect(await reserve(redis, saleId, { ...attempt, orderId: "F1" })).toEqual([11]);
    // the same for a re-run refused by the rate limit (the first run lands in the next window)
    expect((await reserve(redis, saleId, { ...attempt, orderId: "F2", rerun: true, userLimit: 0 }))[0]).toBe(
      3,
    );
    expect(await reserve(redis, saleId, { ...attempt, orderId: "F2" })).toEqual([11]);
    expect(await redis.get(k.stock)).toBe("3");
    expect(await redis.hget(k.holdings, "late")).toBeNull();
    expect(await redis.zcard(k.outbox)).toBe(0);
    // a first run's refusal leaves nothing behind (no re-run can have reserved before it)
    await redis.hset(k.meta, "paused", "1");
    expect(await reserve(redis, saleId, { ...attempt, orderId: "F3" })).toEqual([6]);
    expect(await redis.hexists(k.ledger, "x:F3")).toBe(0);
  });

  it("void: a tombstone refuses a late run of the order id, a reservation comes back once", async () => {
    await initSale(redis, saleId, { stock: 3, perUserLimit: 2, startsAt: now - 1, endsAt: now + 60_000 });
    const k = saleKeys(saleId);
    const v = { userId: "v1", quantity: 1, now };
    // nothing reserved yet: a tombstone, and the late run reserves nothing and stores no answer
    expect(await voidReservation(redis, saleId, { ...v, orderId: "V1", idem: "kv" })).toEqual([
      C.NOT_RESERVED,
      "",
    ]);
    expect(await reserve(redis, saleId, { ...v, orderId: "V1", idem: "kv" })).toEqual([11]);
    expect([await redis.get(k.stock), await redis.hlen(k.holdings), await redis.hlen(k.orders)]).toEqual([
      "3",
      0,
      0,
    ]);
    expect(await redis.exists(k.idempotency("v1", "kv"))).toBe(0);
    expect(parseLedgerEntry(await redis.hget(k.ledger, "x:V1"))).toMatchObject({
      reason: "void",
      counted: false,
    });
    // a reservation whose reply was lost: given back once, its key's answer dropped
    const first = await reserve(redis, saleId, { ...v, orderId: "V2", idem: "kw" });
    expect(first[0]).toBe(1);
    const voided = await voidReservation(redis, saleId, { ...v, orderId: "V2", idem: "kw" });
    expect(voided[0]).toBe(1);
    expect(await voidReservation(redis, saleId, { ...v, orderId: "V2", idem: "kw" })).toEqual([
      C.ALREADY_FINAL,
      voided[1],
    ]);
    expect(await reserve(redis, saleId, { ...v, orderId: "V2" })).toEqual([11]);
    expect(await voidReservation(redis, saleId, { ...v, orderId: "V2" })).toEqual([
      C.ALREADY_FINAL,
      voided[1],
    ]);
    expect([await redis.get(k.stock), await redis.hlen(k.holdings), await redis.hlen(k.orders)]).toEqual([
      "3",
      0,
      0,
    ]);
    expect(await redis.zcard(k.outbox)).toBe(0);
    expect(await redis.exists(k.idempotency("v1", "kw"))).toBe(0);
    // a key whose answer is another order keeps it
    const other = await reserve(redis, saleId, { ...v, orderId: "V3", idem: "kx" });
    await voidReservation(redis, saleId, { ...v, orderId: "V4", idem: "kx" });
    expect((await reserve(redis, saleId, { ...v, orderId: "V5", idem: "kx" })).slice(0, 2)).toEqual(
      other.slice(0, 2),
    );
    expect(await voidReservation(redis, saleId, { ...v, orderId: "V1", quantity: 1, now })).toEqual([
      C.ALREADY_FINAL,
      "",
    ]);
    await redis.del(k.meta);
    expect(await voidReservation(redis, saleId, { ...v, orderId: "V6" })).toEqual([C.NOT_INITIALISED, ""]);
  });

  it("void leaves a reservation alone once a keyed replay claimed it, and entries a rebuild wrote", async () => {
    await initSale(redis, saleId, { stock: 3, perUserLimit: 2, startsAt: now - 1, endsAt: now + 60_000 });
    const k = saleKeys(saleId);
    const v = { userId: "c1", quantity: 1, now };
    await reserve(redis, saleId, { ...v, orderId: "C1", idem: "kc" });
    // an unkeyed re-run of the same order id is the attempt itself: no claim
    await reserve(redis, saleId, { ...v, orderId: "C1" });
    expect(parseLedgerEntry(await redis.hget(k.ledger, "r:C1"))).not.toHaveProperty("claimed");
    // a keyed retry got it back: the shopper knows the order id
    expect((await reserve(redis, saleId, { ...v, orderId: "C2", idem: "kc" })).slice(0, 2)).toEqual([
      1,
      "C1",
    ]);
    const claimed = await voidReservation(redis, saleId, { ...v, orderId: "C1", idem: "kc" });
    expect(claimed[0]).toBe(C.CLAIMED);
    expect(parseLedgerEntry(String(claimed[1]))).toMatchObject({ orderId: "C1", claimed: true, quantity: 1 });
    expect(await redis.get(k.stock)).toBe("2");
    expect(await redis.hexists(k.ledger, "x:C1")).toBe(0);
    const rebuilt: LedgerEntry = {
      type: "reserve",
      orderId: "C3",
      userId: "c1",
      quantity: 1,
      at: now,
      rebuilt: true,
    };
    await redis.hset(k.ledger, ledgerFieldOf(rebuilt), encodeLedgerEntry(rebuilt));
    expect((await voidReservation(redis, saleId, { ...v, orderId: "C3" }))[0]).toBe(C.CLAIMED);
  });

  it("restores exactly once and gives the allowance back", async () => {
    await initSale(redis, saleId, { stock: 2, perUserLimit: 2, startsAt: now - 1, endsAt: now + 60_000 });
    await reserve(redis, saleId, { orderId: "R1", userId: "u1", quantity: 2, now });
    expect(await restore(redis, saleId, { orderId: "R1", userId: "u1", quantity: 2, now })).toEqual([
      C.OK,
      2,
    ]);
    expect(await restore(redis, saleId, { orderId: "R1", userId: "u1", quantity: 2, now })).toEqual([
      C.ALREADY_FINAL,
      2,
    ]);
    const k = saleKeys(saleId);
    expect(await redis.hexists(k.holdings, "u1")).toBe(0);
    expect(await redis.hexists(k.orders, "R1")).toBe(0);
    expect((await reserve(redis, saleId, { orderId: "R2", userId: "u1", quantity: 2, now }))[0]).toBe(1);
  });

  it("adjusts stock once per adjustment id, never below what is reserved", async () => {
    await initSale(redis, saleId, { stock: 5, perUserLimit: 5, startsAt: now - 1, endsAt: now + 60_000 });
    await reserve(redis, saleId, { orderId: "A1", userId: "u1", quantity: 4, now });
    const k = saleKeys(saleId);
    const adjust = (id: string, delta: number) =>
      redis.eval(lua("adjust-stock"), 3, k.meta, k.stock, k.ledger, String(now), id, String(delta));
    expect(await adjust("a1", -2)).toEqual([C.BELOW_RESERVED, 1, 5, 1, 0]);
    expect(await adjust("a2", -1)).toEqual([1, 0, 4, 1, -1]);
    expect(await adjust("a2", -1)).toEqual([C.ALREADY_APPLIED, 0, 4, 1, -1]);
    expect(await adjust("a2", 3)).toEqual([C.ID_REUSED, 0, 4, 1, -1]);
    await redis.hset(k.meta, "epoch", "7");
    expect(await adjust("a3", 10)).toEqual([1, 10, 14, 7, 10]);
    expect(parseLedgerEntry(await redis.hget(k.ledger, "a:a3"))).toMatchObject({ delta: 10, epoch: 7 });
    // a2 was applied in generation 1; a rebuild replaced that state (the caller only gets here when
    // Postgres has not recorded it), so in generation 7 it is applied again, once
    expect(await adjust("a2", -1)).toEqual([1, 9, 13, 7, -1]);
    expect(await adjust("a2", -1)).toEqual([C.ALREADY_APPLIED, 9, 13, 7, -1]);
  });

  it("survives a concurrent burst: no oversell, nobody over the limit, ledger matches stock", async () => {
    const stock = 200;
    await initSale(redis, saleId, { stock, perUserLimit: 2, startsAt: now - 1, endsAt: now + 60_000 });
    const clients = Array.from({ length: 8 }, () => new Redis(server.url));
    const attempts = 4000;
    const replies = await Promise.all(
      Array.from({ length: attempts }, (_, i) =>
        reserve(clients[i % clients.length] as Redis, saleId, {
          orderId: `b${i}`,
          userId: `user${i % 700}`,
          quantity: 1 + (i % 3),
          now,
        }),
      ),
    );
    for (const c of clients) c.disconnect();
    const k = saleKeys(saleId);
    const reserved = replies.filter((r) => r[0] === 1).reduce((sum, r) => sum + Number(r[2]), 0);
    expect(reserved).toBe(stock);
    expect(await redis.get(k.stock)).toBe("0");
    const holdings = await redis.hgetall(k.holdings);
    expect(Math.max(...Object.values(holdings).map(Number))).toBeLessThanOrEqual(2);
    expect(Object.values(holdings).reduce((s, v) => s + Number(v), 0)).toBe(stock);
    const ledger = Object.values(await redis.hgetall(k.ledger)).map(parseLedgerEntry);
    expect(ledger).not.toContain(null);
    expect(ledger.reduce((s, e) => s + (e?.type === "reserve" ? e.quantity : 0), 0)).toBe(stock);
    expect(await redis.zcard(k.outbox)).toBe(ledger.length);
    expect(replies.some((r) => r[0] === 10)).toBe(true);
  });
});

/**
 * The whole ledger, each value read with the TypeScript parser: every entry parses, under its own
 * field, and the parser keeps every key the script wrote (the type names the whole stored format).
 */
async function readLedger(): Promise<Record<string, LedgerEntry>> {
  const ledger: Record<string, LedgerEntry> = {};
  for (const [field, json] of Object.entries(await redis.hgetall(saleKeys(saleId).ledger))) {
    const entry = parseLedgerEntry(json);
    expect(entry, `${field}: ${json}`).not.toBeNull();
    expect(entry, field).toEqual(JSON.parse(json));
    expect(ledgerFieldOf(entry as LedgerEntry)).toBe(field);
    ledger[field] = entry as LedgerEntry;
  }
  return ledger;
}

describe("what the Lua scripts write into the ledger parses with src/stock/ledger-entry.ts", () => {
  beforeEach(async () => {
    await initSale(redis, saleId, {
      stock: 20,
      perUserLimit: 5,
      startsAt: now - 1,
      endsAt: now + 60_000,
      paymentWindowMs: 900_000,
    });
  });

  it("reserve, restore, void, debit and adjust: every kind of entry each writes", async () => {
    const k = saleKeys(saleId);
    const one = { quantity: 1, now };
    await reserve(redis, saleId, { orderId: "r1", userId: "u1", quantity: 2, now, idem: "k1" });
    await reserve(redis, saleId, { orderId: "r1-retry", userId: "u1", quantity: 2, now, idem: "k1" });
    await redis.hset(k.meta, "paused", "1");
    await reserve(redis, saleId, { ...one, orderId: "f1", userId: "u2", rerun: true });
    await redis.hset(k.meta, "paused", "0");
    await reserve(redis, saleId, { ...one, orderId: "e1", userId: "u3" });
    await restore(redis, saleId, { ...one, orderId: "e1", userId: "u3" });
    await restore(redis, saleId, { ...one, orderId: "n1", userId: "u3" });
    await reserve(redis, saleId, { ...one, orderId: "v1", userId: "u4" });
    await voidReservation(redis, saleId, { ...one, orderId: "v1", userId: "u4" });
    await voidReservation(redis, saleId, { ...one, orderId: "v2", userId: "u4" });
    const debit = [k.meta, k.stock, k.holdings, k.ledger, String(now), "1", "d1", "u5", "2"];
    await redis.eval(lua("debit-stock"), 4, ...debit);
    await redis.eval(lua("adjust-stock"), 3, k.meta, k.stock, k.ledger, String(now), "a1", "-3");

    const ledger = await readLedger();
    expect(Object.keys(ledger).sort()).toEqual(
      ["a:a1", "r:d1", "r:e1", "r:r1", "r:v1", "x:e1", "x:f1", "x:n1", "x:v1", "x:v2"].sort(),
    );
    expect(ledger["r:r1"]).toEqual({
      type: "reserve",
      orderId: "r1",
      userId: "u1",
      quantity: 2,
      before: 20,
      after: 18,
      at: now,
      expiresAt: now + 900_000,
      epoch: 1,
      claimed: true,
    });
    expect(ledger["x:f1"]).toMatchObject({ reason: "void", counted: false, before: 18, after: 18 });
    expect(ledger["x:e1"]).toMatchObject({ reason: "expired", quantity: 1 });
    expect(ledger["x:e1"]).not.toHaveProperty("counted");
    expect(ledger["x:n1"]).toMatchObject({ reason: "expired", counted: false });
    expect(ledger["x:v1"]).toMatchObject({ reason: "void", userId: "u4" });
    expect(ledger["x:v2"]).toMatchObject({ reason: "void", counted: false });
    expect(ledger["r:d1"]).toMatchObject({ late: true, epoch: 1, quantity: 2 });
    expect(ledger["r:d1"]).not.toHaveProperty("expiresAt");
    expect(ledger["a:a1"]).toEqual({
      type: "adjust",
      adjustmentId: "a1",
      delta: -3,
      before: 16,
      after: 13,
      at: now,
      epoch: 1,
    });
  });

  it("rebuild-sale: the entries TypeScript encodes, the kept ones the script writes, restores kept as they were", async () => {
    const k = saleKeys(saleId);
    await reserve(redis, saleId, { orderId: "q1", userId: "u1", quantity: 2, now });
    await reserve(redis, saleId, { orderId: "q2", userId: "u2", quantity: 1, now });
    await redis.hdel(k.ledger, "r:q2");
    await reserve(redis, saleId, { orderId: "e1", userId: "u3", quantity: 1, now });
    await restore(redis, saleId, { orderId: "e1", userId: "u3", quantity: 1, now });
    const restoreEntry = await redis.hget(k.ledger, "x:e1");
    const rebuilt: ReservationEntry = {
      type: "reserve",
      orderId: "p1",
      userId: "u9",
      quantity: 3,
      at: now - 5_000,
      expiresAt: now + 60_000,
      epoch: 2,
      rebuilt: true,
    };
    await rebuild(redis, saleId, {
      meta: { ...(await redis.hgetall(k.meta)), epoch: "2" },
      remaining: 17,
      holdings: { u9: 3 },
      ledger: { [ledgerFieldOf(rebuilt)]: encodeLedgerEntry(rebuilt) },
      settled: [],
    });

    const ledger = await readLedger();
    expect(Object.keys(ledger).sort()).toEqual(["r:p1", "r:q1", "r:q2", "x:e1"]);
    expect(ledger["r:p1"]).toEqual(rebuilt);
    expect(ledger["r:q1"]).toMatchObject({ before: 20, after: 18, epoch: 1 });
    expect(ledger["r:q2"]).toEqual({
      type: "reserve",
      orderId: "q2",
      userId: "u2",
      quantity: 1,
      at: now,
      expiresAt: now + 900_000,
      epoch: 1,
      kept: true,
    });
    expect(await redis.hget(k.ledger, "x:e1")).toBe(restoreEntry);
  });
});
