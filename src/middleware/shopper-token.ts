import { decodeHeader, isTokenHeader } from "hono/utils/jwt/jwt";
import { base64UrlBytes, hmacSha256, sameBytes } from "../crypto/hmac-sha256";
import type { Config } from "../env";
import type { VerifiedToken, VerifiedTokens } from "../memory/verified-tokens";

/** What a shopper token is checked against: the secret, and the issuer and audience when set. */
export type ShopperTokenSettings = Pick<Config, "JWT_SECRET" | "JWT_ISSUER" | "JWT_AUDIENCE">;

/** A shopper token's verdict: its subject, or why it is refused (each has its own 401 message). */
export type TokenVerdict = { ok: true; sub: string } | { ok: false; reason: "invalid" | "no_exp" | "no_sub" };

const MAX_USER_ID_LENGTH = 128;
const SIGNATURE = /^[A-Za-z0-9_-]*={0,2}$/;

/**
 * Characters no user id may hold: NUL (Postgres text cannot store it: the order write of every order
 * in its batch failed) and unpaired UTF-16 surrogates (stored as U+FFFD by Redis and Postgres alike, so
 * "a\uD83D" and "a\uFFFD" were one user there: one key's answers, holdings, and each other's orders).
 */
const unstorable = (id: string) => id.includes("\u0000") || /\p{Cs}/u.test(id);

/** A user id the stores can keep: 1–128 UTF-16 units of well-formed text without NUL. */
export const storableUserId = (sub: string) =>
  sub.length > 0 && sub.length <= MAX_USER_ID_LENGTH && !unstorable(sub);

/** The time claims at `now` (unix seconds), exactly as hono/jwt's `verify` checks them. */
function inTime(t: Pick<VerifiedToken, "exp" | "nbf" | "iat">, now: number): boolean {
  if (t.nbf !== undefined && t.nbf > now) return false;
  if (t.exp <= now) return false;
  return t.iat === undefined || t.iat <= now;
}

/** Header segments seen, and whether each is an HS256 header hono/jwt accepts (a few distinct ones in practice). */
const headers = new Map<string, boolean>();
const HEADERS_KEPT = 16;

/** Whether a token's first segment is an HS256 header (hono/jwt's `isTokenHeader`), memoised by its text. */
function headerAccepted(segment: string): boolean {
  const known = headers.get(segment);
  if (known !== undefined) return known;
  let accepted = false;
  try {
    const header: unknown = decodeHeader(`${segment}..`);
    accepted = isTokenHeader(header) && header.alg === "HS256";
  } catch {
    accepted = false;
  }
  if (headers.size < HEADERS_KEPT) headers.set(segment, accepted);
  return accepted;
}

/** Stateless between calls (each `decode` without `stream` is whole); invalid UTF-8 becomes U+FFFD, as Buffer's. */
const utf8 = new TextDecoder();

const finiteOrAbsent = (v: unknown) => v === undefined || (typeof v === "number" && Number.isFinite(v));

/**
 * hono/jwt's `verify` for HS256 (the header's shape and `alg`, `nbf` / `exp` / `iat`, `iss`, `aud`, the
 * signature's alphabet), with the HMAC computed synchronously (src/crypto/hmac-sha256.ts: node:crypto, or
 * on Deno a pure-JS HMAC) instead of an awaited WebCrypto call: the claims, or null.
 */
function verifyHs256(token: string, s: ShopperTokenSettings, now: number): Record<string, unknown> | null {
  const parts = token.split(".");
  if (parts.length !== 3 || !headerAccepted(parts[0] as string)) return null;
  const payloadBytes = base64UrlBytes(parts[1] as string);
  if (!payloadBytes) return null;
  let decoded: unknown;
  try {
    decoded = JSON.parse(utf8.decode(payloadBytes));
  } catch {
    return null;
  }
  if (decoded === null) return null;
  // a payload that is JSON but not an object has no claims (refused below for its missing `exp`)
  const payload: Record<string, unknown> =
    typeof decoded === "object" ? (decoded as Record<string, unknown>) : {};
  const { nbf, exp, iat } = payload;
  if (!finiteOrAbsent(nbf) || !finiteOrAbsent(exp) || !finiteOrAbsent(iat)) return null;
  if (!inTime({ nbf: nbf as number, exp: (exp as number | undefined) ?? Infinity, iat: iat as number }, now))
    return null;
  if (s.JWT_ISSUER && payload.iss !== s.JWT_ISSUER) return null;
  if (s.JWT_AUDIENCE) {
    const aud = payload.aud;
    if (!aud || !(Array.isArray(aud) ? aud : [aud]).includes(s.JWT_AUDIENCE)) return null;
  }
  const signature = parts[2] as string;
  if (!SIGNATURE.test(signature)) return null;
  const given = base64UrlBytes(signature);
  const expected = hmacSha256(s.JWT_SECRET, token.slice(0, token.lastIndexOf(".")));
  return given && sameBytes(given, expected) ? payload : null;
}

/**
 * Checks a shopper token: HS256 only (an `alg: none` or RS256 header is refused), `exp` required and
 * checked, `nbf` and `iat` checked, `sub` required (1–128 UTF-16 units of well-formed text without
 * NUL), and `iss` / `aud` equal to JWT_ISSUER / JWT_AUDIENCE when those are set.
 *
 * With `tokens`, a token accepted once is remembered by its full text (signature included, so a token
 * with any other signature is another key and verified in full): a retry costs one map lookup, and its
 * time claims are checked again against `nowSeconds`, to the second. Only accepted tokens are kept.
 *
 * @example
 * const verdict = verifyShopperToken(token, config, memory.verifiedTokens, Math.floor(Date.now() / 1000));
 */
export function verifyShopperToken(
  token: string,
  settings: ShopperTokenSettings,
  tokens: VerifiedTokens | undefined,
  nowSeconds: number,
): TokenVerdict {
  const known = tokens?.get(token);
  if (known)
    return inTime(known, nowSeconds) ? { ok: true, sub: known.sub } : { ok: false, reason: "invalid" };
  const payload = verifyHs256(token, settings, nowSeconds);
  if (!payload) return { ok: false, reason: "invalid" };
  const { sub, exp, nbf, iat } = payload;
  if (typeof exp !== "number") return { ok: false, reason: "no_exp" };
  if (typeof sub !== "string" || sub.length === 0 || sub.length > MAX_USER_ID_LENGTH || unstorable(sub))
    return { ok: false, reason: "no_sub" };
  tokens?.set(token, { sub, exp, nbf: nbf as number | undefined, iat: iat as number | undefined });
  return { ok: true, sub };
}
