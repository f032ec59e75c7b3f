import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { buildTokenFilter, parseTokenFilter } from "../../src/catalog/catalog";
import { saleStatus } from "../../src/catalog/sale-record";
import { type ErrorCode, statusOf } from "../../src/http/api-error";
import { newOrderId, newSaleId, saleIdOfOrder } from "../../src/ids";
import { decodeReserveReply } from "../../src/stock/reserve";

const root = resolve(import.meta.dirname, "../..");

describe("reserve-stock.lua's return codes", () => {
  it("decode to one outcome each; the script header documents every code", () => {
    const header = readFileSync(join(root, "lua/reserve-stock.lua"), "utf8");
    const kinds = new Set<string>();
    const codes = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 22];
    for (const code of codes) {
      expect(header).toMatch(new RegExp(`\\{${code}[,}]`));
      kinds.add(decodeReserveReply([code, "o", 2, 3, 4, 1]).kind);
    }
    expect(kinds.size).toBe(codes.length);
    for (const other of [12, 13, 21]) expect(() => decodeReserveReply([other])).toThrow(/unknown code/);
  });
});

describe("the error table", () => {
  it("gives the contract's status for each buy outcome", () => {
    const expected: [ErrorCode, number][] = [
      ["INVALID_REQUEST", 400],
      ["UNAUTHENTICATED", 401],
      ["UNKNOWN_PRODUCT", 404],
      ["SALE_NOT_STARTED", 409],
      ["SALE_ENDED", 409],
      ["SALE_PAUSED", 409],
      ["ALREADY_PURCHASED", 409],
      ["LIMIT_EXCEEDED", 409],
      ["INSUFFICIENT_STOCK", 409],
      ["SOLD_OUT", 410],
      ["RATE_LIMITED", 429],
      ["UNAVAILABLE", 503],
      ["ORDER_EXPIRED", 409],
      ["ORDER_CANCELLED", 409],
      ["ORDER_PAID", 409],
      ["ORDER_NOT_READY", 409],
      ["UNKNOWN_ORDER", 404],
      ["UNKNOWN_SALE", 404],
    ];
    for (const [code, status] of expected) expect([code, statusOf(code)]).toEqual([code, status]);
  });
});

describe("ids", () => {
  it("order ids name their sale and nothing else parses", () => {
    const sale = newSaleId();
    expect(sale).toMatch(/^s[0-9a-z]{11}$/);
    const order = newOrderId(sale);
    expect(saleIdOfOrder(order)).toBe(sale);
    for (const bad of ["", "x", `${sale}-short`, `${sale}-${"A".repeat(20)}`, `../${order}`]) {
      expect(saleIdOfOrder(bad)).toBeNull();
    }
  });
});

describe("sale status", () => {
  const base = {
    saleId: "s",
    productId: "p",
    name: "n",
    priceCents: 1,
    perUserLimit: 1,
    startsAt: 1000,
    endsAt: 2000,
    paused: false,
    paymentWindowMs: 1,
    stock: 5,
    initialStock: 5,
    remaining: 5,
    productToken: "t",
  };
  it("comes from the window, the pause flag, a rebuild in progress and the stock, in that order", () => {
    expect(saleStatus(base, 999)).toBe("upcoming");
    expect(saleStatus(base, 1000)).toBe("live");
    expect(saleStatus({ ...base, remaining: 0 }, 1500)).toBe("sold_out");
    expect(saleStatus({ ...base, paused: true, remaining: 0 }, 1500)).toBe("paused");
    expect(saleStatus({ ...base, recoveringUntil: 1600 }, 1500)).toBe("paused");
    expect(saleStatus({ ...base, recoveringUntil: 1600 }, 1600)).toBe("live");
    expect(saleStatus({ ...base, paused: true }, 2000)).toBe("ended");
  });
});

describe("the token Bloom filter", () => {
  it("holds every token and lets through about 0.1 % of unknown ones", () => {
    const tokens = Array.from({ length: 2000 }, (_, i) => `token-${i}`);
    const filter = parseTokenFilter(buildTokenFilter(tokens));
    expect(tokens.every((t) => filter.has(t))).toBe(true);
    let falsePositives = 0;
    for (let i = 0; i < 20_000; i++) if (filter.has(`stranger-${i}`)) falsePositives++;
    expect(falsePositives / 20_000).toBeLessThan(0.005);
  });
});

describe("lua/", () => {
  it("every script documents KEYS, ARGV and its returns, and builds no keys itself", () => {
    for (const file of readdirSync(join(root, "lua"))) {
      const source = readFileSync(join(root, "lua", file), "utf8");
      expect(source, file).toMatch(/KEYS\[1\]/);
      expect(source, file).toMatch(/ARGV/);
      expect(source, file).toMatch(/Returns/);
      expect(source, file).not.toMatch(/redis\.call\("TIME"/i);
      expect(source, file).not.toMatch(/redis\.call\([^)]*KEYS\[\d+\]\s*\.\./);
    }
  });
});
