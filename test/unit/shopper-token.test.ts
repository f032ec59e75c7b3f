import { createHmac } from "node:crypto";
import { sign, verify } from "hono/jwt";
import { describe, expect, it } from "vitest";
import { createVerifiedTokens } from "../../src/memory/verified-tokens";
import { verifyShopperToken } from "../../src/middleware/shopper-token";

const SECRET = "test-secret-of-some-length";
const settings = { JWT_SECRET: SECRET, JWT_ISSUER: undefined, JWT_AUDIENCE: undefined };
const NOW = 1_900_000_000;

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
/** A token with any header and payload, signed with `secret` (HS256 over the first two parts). */
function token(payload: unknown, header: unknown = { alg: "HS256", typ: "JWT" }, secret = SECRET): string {
  const head = `${b64(header)}.${b64(payload)}`;
  return `${head}.${createHmac("sha256", secret).update(head).digest("base64url")}`;
}

describe("shopper tokens (synchronous HS256, cached by their text)", () => {
  it("accepts a good token, and a cached one is refused from its exp second on", () => {
    const tokens = createVerifiedTokens(10);
    const t = token({ sub: "ann", exp: NOW + 10 });
    expect(verifyShopperToken(t, settings, tokens, NOW)).toEqual({ ok: true, sub: "ann" });
    expect(tokens.size).toBe(1);
    expect(verifyShopperToken(t, settings, tokens, NOW + 9)).toEqual({ ok: true, sub: "ann" });
    expect(verifyShopperToken(t, settings, tokens, NOW + 10)).toEqual({ ok: false, reason: "invalid" });
    expect(verifyShopperToken(t, settings, tokens, NOW + 11)).toEqual({ ok: false, reason: "invalid" });
    // not yet valid (nbf) and issued in the future (iat) are checked on every use too
    const later = token({ sub: "bob", exp: NOW + 100, nbf: NOW + 5, iat: NOW + 5 });
    expect(verifyShopperToken(later, settings, tokens, NOW + 4).ok).toBe(false);
    expect(verifyShopperToken(later, settings, tokens, NOW + 5)).toEqual({ ok: true, sub: "bob" });
    expect(verifyShopperToken(later, settings, tokens, NOW + 4).ok).toBe(false);
  });

  it("cannot be poisoned: a token with a bad signature is neither accepted nor kept", () => {
    const tokens = createVerifiedTokens(10);
    const good = token({ sub: "ann", exp: NOW + 10 });
    const [h, p] = good.split(".");
    const forged = `${h}.${p}.${createHmac("sha256", "not-the-secret").update(`${h}.${p}`).digest("base64url")}`;
    const truncated = good.slice(0, -2);
    for (const bad of [forged, truncated, `${h}.${p}.`, `${h}.${p}`]) {
      expect(verifyShopperToken(bad, settings, tokens, NOW)).toEqual({ ok: false, reason: "invalid" });
    }
    expect(tokens.size).toBe(0);
    // once the good token is known, its forged twin (same claims, other signature) is still refused
    expect(verifyShopperToken(good, settings, tokens, NOW).ok).toBe(true);
    expect(verifyShopperToken(forged, settings, tokens, NOW)).toEqual({ ok: false, reason: "invalid" });
    expect(tokens.size).toBe(1);
  });

  it("refuses what the contract refuses, each with its reason, and keeps none of it", () => {
    const tokens = createVerifiedTokens(10);
    const cases: [string, string][] = [
      [token({ sub: "ann" }), "no_exp"],
      [token({ exp: NOW + 10 }), "no_sub"],
      [token({ sub: "", exp: NOW + 10 }), "no_sub"],
      [token({ sub: "x".repeat(129), exp: NOW + 10 }), "no_sub"],
      [token({ sub: "a\u0000b", exp: NOW + 10 }), "no_sub"],
      [token({ sub: "a\uD83D", exp: NOW + 10 }), "no_sub"],
      [token({ sub: "ann", exp: "soon" }), "invalid"],
      [token({ sub: "ann", exp: NOW }), "invalid"],
      [token({ sub: "ann", exp: NOW + 10 }, { alg: "none" }), "invalid"],
      [token({ sub: "ann", exp: NOW + 10 }, { alg: "HS512", typ: "JWT" }), "invalid"],
      [token({ sub: "ann", exp: NOW + 10 }, { alg: "HS256", typ: "JWT", crit: ["x"] }), "invalid"],
      [token({ sub: "ann", exp: NOW + 10 }, { alg: "HS256", typ: "other" }), "invalid"],
      [`${b64({ alg: "HS256" })}.bm90IGpzb24.${"A".repeat(43)}`, "invalid"],
    ];
    for (const [t, reason] of cases) {
      expect(verifyShopperToken(t, settings, tokens, NOW), t).toEqual({ ok: false, reason });
    }
    expect(tokens.size).toBe(0);
    const withClaims = { ...settings, JWT_ISSUER: "shop", JWT_AUDIENCE: "buyers" };
    const ok = token({ sub: "ann", exp: NOW + 10, iss: "shop", aud: ["x", "buyers"] });
    expect(verifyShopperToken(ok, withClaims, tokens, NOW)).toEqual({ ok: true, sub: "ann" });
    for (const claims of [{ iss: "other", aud: "buyers" }, { iss: "shop", aud: "x" }, { aud: "buyers" }]) {
      const t = token({ sub: "ann", exp: NOW + 10, ...claims });
      expect(verifyShopperToken(t, withClaims, tokens, NOW).ok).toBe(false);
    }
  });

  it("agrees with hono/jwt's verify on tokens it signs", async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const payload of [
      { sub: "ann", exp: now + 60 },
      { sub: "ann", exp: now - 1 },
      { sub: "ann", exp: now + 60, nbf: now + 30 },
      { sub: "ann", exp: now + 60, iat: now - 5 },
    ]) {
      const t = await sign(payload, SECRET, "HS256");
      const theirs = await verify(t, SECRET, "HS256").then(
        () => true,
        () => false,
      );
      expect(verifyShopperToken(t, settings, undefined, now).ok, JSON.stringify(payload)).toBe(theirs);
    }
  });
});

describe("the verified-token cache's bound", () => {
  it("holds at most its size, keeps the tokens in use and forgets the others", () => {
    const tokens = createVerifiedTokens(4);
    const v = (sub: string) => ({ sub, exp: NOW + 10, nbf: undefined, iat: undefined });
    for (const t of ["a", "b", "c", "d", "e", "f"]) {
      tokens.set(t, v(t));
      expect(tokens.size).toBeLessThanOrEqual(4);
      expect(tokens.get("a")?.sub).toBe("a"); // used all along: never forgotten
    }
    expect(tokens.get("b")).toBeUndefined();
    expect(tokens.get("f")?.sub).toBe("f");
  });
});
