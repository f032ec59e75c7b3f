import { createLru, type Lru } from "./lru";

/**
 * A shopper token this process verified (signature, header, issuer, audience, subject), kept by its
 * full text: a retry sending the same token skips the HMAC. Only the time claims are checked again on
 * each use, to the second (src/middleware/shopper-token.ts).
 */
export type VerifiedToken = { sub: string; exp: number; nbf: number | undefined; iat: number | undefined };

/** Verified shopper tokens, least recently used forgotten first. */
export type VerifiedTokens = Lru<VerifiedToken>;

/** Tokens kept per process (about 400 bytes each with the key): 4 MB at most. */
export const VERIFIED_TOKENS_KEPT = 10_000;

/** A fresh, empty cache of verified tokens. */
export function createVerifiedTokens(maxEntries = VERIFIED_TOKENS_KEPT): VerifiedTokens {
  return createLru<VerifiedToken>(maxEntries);
}
