import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RedisProcess, startRedis } from "../../local/redis-process";
import { saleKeys } from "../../src/sale/keys";
import {
  encodeLedgerEntry,
  type LedgerEntry,
  ledgerFieldOf,
  parseLedgerEntry,
  type ReservationEntry,
} from "../../src/sale/ledger-entry";
import { initSale, lua, reserve, restore, voidReservation } from "../support/lua";

let server: RedisProcess;
let redis: Redis;
const now = 1_800_000_000_000;
let saleId = "";

beforeAll(async () => {
  server = await startRedis({ port: 0 });
  redis = new Redis(server.url);
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});
beforeEach(async () => {
  saleId = `s${Math.random().toString(36).slice(2, 13).padEnd(11, "0")}`;
  await initSale(redis, saleId, {
    stock: 20,
    perUserLimit: 5,
    startsAt: now - 1,
    endsAt: now + 60_000,
    paymentWindowMs: 900_000,
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

describe("what the Lua scripts write into the ledger parses with src/sale/ledger-entry.ts", () => {
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
    const meta = { ...(await redis.hgetall(k.meta)), epoch: "2" };
    await redis.eval(
      lua("rebuild-sale"),
      6,
      k.meta,
      k.stock,
      k.holdings,
      k.ledger,
      k.orders,
      k.outbox,
      JSON.stringify(meta),
      "17",
      JSON.stringify({ u9: 3 }),
      JSON.stringify({ [ledgerFieldOf(rebuilt)]: encodeLedgerEntry(rebuilt) }),
      "[]",
    );

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
