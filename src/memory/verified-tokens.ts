/**
 * A shopper token this process verified (signature, header, issuer, audience, subject), kept by its
 * full text: a retry sending the same token skips the HMAC. Only the time claims are checked again on
 * each use, to the second (src/middleware/shopper-token.ts).
 */
export type VerifiedToken = { sub: string; exp: number; nbf: number | undefined; iat: number | undefined };

/** Verified shopper tokens, bounded: the ones not used for the longest are forgotten first. */
export type VerifiedTokens = {
  get(token: string): VerifiedToken | undefined;
  set(token: string, value: VerifiedToken): void;
  readonly size: number;
};

/** Tokens kept per process (about 400 bytes each with the key): 4 MB at most. */
export const VERIFIED_TOKENS_KEPT = 10_000;

/**
 * A fresh, empty cache of verified tokens, in two generations of at most `maxEntries / 2` each: a hit in
 * the older one moves to the newer; when the newer is full it becomes the older and the older is
 * dropped whole. Unlike a Map-ordered LRU (delete the oldest key on each insert), a crowd of distinct
 * tokens costs one `set` per token and no walk over deleted entries, and the bound holds the same.
 */
export function createVerifiedTokens(maxEntries = VERIFIED_TOKENS_KEPT): VerifiedTokens {
  const half = Math.max(1, Math.floor(maxEntries / 2));
  let current = new Map<string, VerifiedToken>();
  let previous = new Map<string, VerifiedToken>();
  const put = (token: string, value: VerifiedToken) => {
    if (current.size >= half) {
      previous = current;
      current = new Map();
    }
    current.set(token, value);
  };
  return {
    get(token) {
      const hit = current.get(token);
      if (hit !== undefined) return hit;
      const old = previous.get(token);
      if (old !== undefined) {
        previous.delete(token);
        put(token, old);
      }
      return old;
    },
    set(token, value) {
      if (current.has(token)) current.set(token, value);
      else put(token, value);
    },
    get size() {
      return current.size + previous.size;
    },
  };
}
