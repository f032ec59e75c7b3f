import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  encodeLedgerEntry,
  type LedgerEntry,
  ledgerField,
  ledgerFieldOf,
  parseLedgerEntry,
  parseLedgerField,
  reservedOrder,
} from "../../src/stock/ledger-entry";

const root = resolve(import.meta.dirname, "../..");
const id = fc.string({ minLength: 1, maxLength: 30 });
const count = fc.integer({ min: -1_000_000, max: 10_000_000 });
const time = fc.integer({ min: 0, max: 4_102_444_800_000 });
const flag = fc.option(fc.boolean(), { nil: undefined });
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
/** Drops the keys whose value is undefined: what JSON keeps of an object. */
const stored = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const reservation = fc.record({
  type: fc.constant("reserve" as const),
  orderId: id,
  userId: id,
  quantity: count,
  at: time,
  expiresAt: maybe(time),
  epoch: maybe(fc.integer({ min: 1, max: 1_000 })),
  before: maybe(count),
  after: maybe(count),
  claimed: flag,
  rebuilt: flag,
  kept: flag,
  late: flag,
});
const restore = fc.record({
  type: fc.constant("restore" as const),
  orderId: id,
  userId: id,
  quantity: count,
  before: count,
  after: count,
  at: time,
  reason: fc.constantFrom("expired", "cancelled", "void"),
  counted: flag,
});
const adjustment = fc.record({
  type: fc.constant("adjust" as const),
  adjustmentId: id,
  delta: count,
  before: count,
  after: count,
  at: time,
  epoch: maybe(fc.integer({ min: 1, max: 1_000 })),
});
const entry: fc.Arbitrary<LedgerEntry> = fc.oneof(reservation, restore, adjustment);

describe("the ledger entry", () => {
  it("parses back what it encodes, for every kind of entry", () => {
    fc.assert(
      fc.property(entry, (e) => {
        const json = encodeLedgerEntry(e);
        expect(parseLedgerEntry(json)).toEqual(stored(e));
        expect(JSON.parse(json)).toEqual(stored(e));
      }),
    );
  });

  it("stores each entry under its own field, and reads the field back", () => {
    fc.assert(
      fc.property(entry, (e) => {
        const field = ledgerFieldOf(e);
        expect(field.slice(0, 2)).toBe({ reserve: "r:", restore: "x:", adjust: "a:" }[e.type]);
        expect(parseLedgerField(field)).toEqual({
          type: e.type,
          id: e.type === "adjust" ? e.adjustmentId : e.orderId,
        });
      }),
    );
    expect(ledgerField("restore", "o1")).toBe("x:o1");
    expect(parseLedgerField("q:o1")).toBeNull();
  });

  it("reads entries as the scripts' cjson writes them, and those written before generations", () => {
    // reserve-stock.lua (key order is cjson's), then an entry from before epochs and adjust-stock.lua's
    const reserved = parseLedgerEntry(
      '{"after":1,"at":1800000000000,"quantity":2,"type":"reserve","userId":"u9","orderId":"L1","epoch":1,"before":3,"expiresAt":1800000900000}',
    );
    expect(reserved).toMatchObject({ type: "reserve", orderId: "L1", quantity: 2, expiresAt: 1800000900000 });
    const old = parseLedgerEntry(
      '{"type":"reserve","orderId":"o","userId":"u","quantity":1,"at":5,"before":2,"after":1}',
    );
    expect(old && old.type === "reserve" && reservedOrder("s", old)).toEqual({
      orderId: "o",
      saleId: "s",
      userId: "u",
      quantity: 1,
      createdAt: 5,
      expiresAt: 5,
      epoch: 1,
    });
    expect(
      parseLedgerEntry(
        '{"delta":-1,"adjustmentId":"a2","after":0,"type":"adjust","before":1,"at":1800000000000}',
      ),
    ).toEqual({ type: "adjust", adjustmentId: "a2", delta: -1, before: 1, after: 0, at: 1800000000000 });
  });

  it("refuses what is not an entry instead of guessing", () => {
    for (const json of [
      null,
      "",
      "not json",
      "[]",
      '{"userId":"z","quantity":1}',
      '{"type":"restore"}',
      '{"type":"reserve","orderId":"o","userId":"u","quantity":"2","at":1}',
      '{"type":"settle","orderId":"o"}',
    ])
      expect(parseLedgerEntry(json), String(json)).toBeNull();
  });

  it("is what the Lua scripts that write the ledger document and point to", () => {
    const writers = readdirSync(join(root, "lua")).filter((f) =>
      // an entry encoded where it is built, or built first (adjust-stock.lua adds the variant to it)
      /(cjson\.encode\(|local \w+ = )\{\s*type = "/.test(readFileSync(join(root, "lua", f), "utf8")),
    );
    expect(writers.sort()).toEqual([
      "adjust-stock.lua",
      "debit-stock.lua",
      "rebuild-sale.lua",
      "reserve-stock.lua",
      "restore-stock.lua",
      "void-reservation.lua",
    ]);
    for (const file of writers) {
      const header = readFileSync(join(root, "lua", file), "utf8").split("]]")[0] ?? "";
      expect(header, file).toContain("src/stock/ledger-entry.ts");
    }
  });
});
