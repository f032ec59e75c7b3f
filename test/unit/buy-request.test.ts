import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/errors";
import { clientIp, parseBuyBody, parseIdempotencyKey } from "../../src/sale/buy-request";

const rejects = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error instanceof ApiError ? error.code : "other";
  }
  return "accepted";
};

describe("parseBuyBody", () => {
  it("reads quantity 1 from an empty body or an object without quantity", () => {
    expect(parseBuyBody("")).toEqual({ quantity: 1 });
    expect(parseBuyBody("  ")).toEqual({ quantity: 1 });
    expect(parseBuyBody("{}")).toEqual({ quantity: 1 });
    expect(parseBuyBody('{"quantity":10000}')).toEqual({ quantity: 10_000 });
  });

  it.each([
    "{",
    "[]",
    "null",
    '"2"',
    "2",
    '{"quantity":0}',
    '{"quantity":-1}',
    '{"quantity":1.5}',
    '{"quantity":"2"}',
    '{"quantity":1e9}',
    '{"quantity":10001}',
    '{"quantity":null}',
    '{"quantity":true}',
    '{"quantity":[1]}',
  ])("refuses %s with INVALID_REQUEST", (body) => {
    expect(rejects(() => parseBuyBody(body))).toBe("INVALID_REQUEST");
  });
});

describe("parseIdempotencyKey", () => {
  it("accepts visible ASCII up to 128 characters and absence", () => {
    expect(parseIdempotencyKey(undefined)).toBeNull();
    expect(parseIdempotencyKey("click-1")).toBe("click-1");
    expect(parseIdempotencyKey("k".repeat(128))).toBe("k".repeat(128));
  });
  it.each(["", " ", "a b", "k".repeat(129), "ключ", "a\u0000b"])("refuses %j", (key) => {
    expect(rejects(() => parseIdempotencyKey(key))).toBe("INVALID_REQUEST");
  });
});

describe("clientIp", () => {
  it("reads CF-Connecting-IP and falls back for anything unusable", () => {
    expect(clientIp("203.0.113.9")).toBe("203.0.113.9");
    expect(clientIp(undefined)).toBe("unknown");
    expect(clientIp("x".repeat(65))).toBe("unknown");
  });
});
