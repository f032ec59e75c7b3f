import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { base64UrlBytes, hmacSha256, jsHmacSha256, sameBytes } from "../../src/crypto/hmac-sha256";

const nodeHmac = (secret: string, message: string) =>
  new Uint8Array(createHmac("sha256", secret).update(message).digest());

describe("HMAC-SHA256 for shopper tokens", () => {
  it("the pure-JS HMAC (Deno's) equals node:crypto's for any secret and message, the key state reused", () => {
    // few secrets, many messages: the memoised key state is used again and again, and must not carry over
    const secret = fc.constantFrom("s", "a".repeat(64), "b".repeat(65), "ünïcødé-🔑", "x".repeat(200));
    fc.assert(
      fc.property(secret, fc.string({ unit: "binary", maxLength: 600 }), (key, message) => {
        expect(jsHmacSha256(key, message)).toEqual(nodeHmac(key, message));
        expect(new Uint8Array(hmacSha256(key, message))).toEqual(nodeHmac(key, message));
      }),
      { numRuns: 2_000 },
    );
  });

  it("decodes base64url with or without padding, and refuses other text where the runtime is strict", () => {
    const bytes = (text: string) => {
      const b = base64UrlBytes(text);
      return b && new Uint8Array(b);
    };
    expect(bytes("aGk")).toEqual(new Uint8Array([104, 105]));
    expect(bytes("aGk=")).toEqual(new Uint8Array([104, 105]));
    expect(bytes("_-8")).toEqual(new Uint8Array([255, 239]));
    const mac = nodeHmac("k", "m");
    expect(bytes(Buffer.from(mac).toString("base64url"))).toEqual(new Uint8Array(mac));
  });

  it("compares bytes by content and length", () => {
    expect(sameBytes(new Uint8Array([1, 2]), new Uint8Array([1, 2]))).toBe(true);
    expect(sameBytes(new Uint8Array([1, 2]), new Uint8Array([1, 3]))).toBe(false);
    expect(sameBytes(new Uint8Array([1, 2]), new Uint8Array([1, 2, 3]))).toBe(false);
  });
});
