import { createHmac, timingSafeEqual } from "node:crypto";

const header = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url");

/**
 * A shopper token as the contract defines it (HS256, claim `sub`), signed with node:crypto: the load
 * generator mints one per user before the clock starts, so 100,000 of them take a fraction of a second.
 */
export function shopperToken(secret: string, sub: string, ttlSeconds = 3_600): string {
  const now = Math.floor(Date.now() / 1000);
  const payload = Buffer.from(JSON.stringify({ sub, iat: now, exp: now + ttlSeconds })).toString("base64url");
  const signature = createHmac("sha256", secret).update(`${header}.${payload}`).digest("base64url");
  return `${header}.${payload}.${signature}`;
}

/** The `sub` of a token signed with `secret`, or null (bad signature, malformed, no `exp`, expired). */
export function verifyShopperToken(secret: string, token: string): string | null {
  const [h, p, s] = token.split(".");
  if (!h || !p || !s || h !== header) return null;
  const expected = createHmac("sha256", secret).update(`${h}.${p}`).digest();
  const given = Buffer.from(s, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const claims = JSON.parse(Buffer.from(p, "base64url").toString("utf8")) as {
      sub?: unknown;
      exp?: unknown;
    };
    if (typeof claims.exp !== "number" || claims.exp * 1000 <= Date.now()) return null;
    return typeof claims.sub === "string" ? claims.sub : null;
  } catch {
    return null;
  }
}
