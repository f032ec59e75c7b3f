import {
  type CompactJWSHeaderParameters,
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  type ExportedJWKSCache,
  type FlattenedJWSInput,
  type JWTVerifyGetKey,
  jwksCache,
  type RemoteJWKSet,
} from "jose";
import { JOSEError, JWKSInvalid, JWKSTimeout } from "jose/errors";
import { traced } from "../tracing";

/** How long one read of the key set may take before it counts as down. */
const FETCH_TIMEOUT_MS = 3_000;

/** With no key in hand, how long after a failed read the next request may try again (not every request). */
const EMPTY_RETRY_MS = 2_000;

/** How often a request that waits on another request's read looks whether it has ended. */
const WAIT_STEP_MS = 20;

/** How the shop's key set is read: its URL, how long keys are used, the least time between two reads. */
export type KeySetSettings = { url: string; cacheMs: number; cooldownMs: number };

/**
 * One key set as this isolate or process knows it (a field of `Memory`): jose's remote set, the keys it
 * last fetched (finished values jose writes into `cache`), the last time a read failed, and until when
 * a read one request started may still be under way. jose starts a read of its own for each request on
 * workerd (it never hands one request another's pending fetch there, as workerd forbids), so this entry
 * keeps to one read at a time per isolate itself: while one runs, the other requests verify with the
 * keys in hand, or, for a key id not in hand, wait for that read's end (plain values, no shared I/O).
 */
export type KeySetEntry = {
  settings: KeySetSettings;
  remote: RemoteJWKSet;
  cache: ExportedJWKSCache | Record<string, never>;
  /** the keys last fetched, ready to verify while the key set cannot be read: by `cache.uat` */
  fallback: { uat: number; getKey: JWTVerifyGetKey } | null;
  failedAt: number;
  /** until when the read one request started may still be under way (0: none is) */
  readingUntil: number;
};

/** The key set could not be read and no key in hand fits the token: the caller answers 503, not 401. */
export class KeySetUnavailableError extends Error {
  override name = "KeySetUnavailableError";
}

/** A fresh entry: no read happens until a token needs a key. */
export function createKeySetEntry(settings: KeySetSettings): KeySetEntry {
  const cache: KeySetEntry["cache"] = {};
  const remote = createRemoteJWKSet(new URL(settings.url), {
    timeoutDuration: FETCH_TIMEOUT_MS,
    cacheMaxAge: settings.cacheMs,
    cooldownDuration: settings.cooldownMs,
    [jwksCache]: cache,
    // each read of the key set in a span (with tracing on)
    [customFetch]: (url, init) =>
      traced("jwks fetch", { "http.request.method": "GET" }, () => fetch(url, init)),
  });
  return { settings, remote, cache, fallback: null, failedAt: Number.NEGATIVE_INFINITY, readingUntil: 0 };
}

/** The entry for `settings` in `sets`, made on first use (and again when the settings change). */
export function keySetFor(sets: Map<string, KeySetEntry>, settings: KeySetSettings): KeySetEntry {
  const known = sets.get(settings.url);
  const same =
    known?.settings.cacheMs === settings.cacheMs && known.settings.cooldownMs === settings.cooldownMs;
  if (known && same) return known;
  const entry = createKeySetEntry(settings);
  sets.set(settings.url, entry);
  return entry;
}

/** A failure to read the key set (down, timed out, not 200, not a key set), as opposed to a token's fault. */
function isReadFailure(error: unknown): boolean {
  if (!(error instanceof JOSEError)) return true;
  return error instanceof JWKSTimeout || error instanceof JWKSInvalid || error.code === "ERR_JOSE_GENERIC";
}

/** The keys last fetched, as a local set (made once per fetch), or null before the first fetch. */
function fallbackOf(entry: KeySetEntry): JWTVerifyGetKey | null {
  const { jwks, uat } = entry.cache;
  if (!jwks || uat === undefined) return null;
  if (entry.fallback?.uat !== uat) entry.fallback = { uat, getKey: createLocalJWKSet(jwks) };
  return entry.fallback.getKey;
}

async function fromFallback(
  getKey: JWTVerifyGetKey,
  header: CompactJWSHeaderParameters,
  token: FlattenedJWSInput,
  cause: unknown,
) {
  try {
    return await getKey(header, token);
  } catch (error) {
    if (error instanceof JOSEError && error.code === "ERR_JWKS_NO_MATCHING_KEY")
      throw new KeySetUnavailableError("the key set cannot be read and no key in hand fits", { cause });
    throw error;
  }
}

/** Whether jose refused a token because no key of the set has its `kid` (or fits its `alg`). */
function noMatchingKey(error: unknown): boolean {
  return error instanceof JOSEError && error.code === "ERR_JWKS_NO_MATCHING_KEY";
}

/**
 * Waits for the read another request of this isolate started (it ends, or its time runs out), then
 * verifies with the keys it brought: a key id still not among them is jose's refusal (401), or, if that
 * read failed, {@link KeySetUnavailableError} (503).
 */
async function afterTheRead(
  entry: KeySetEntry,
  header: CompactJWSHeaderParameters,
  token: FlattenedJWSInput,
) {
  const since = Date.now();
  while (entry.readingUntil > Date.now()) await new Promise((r) => setTimeout(r, WAIT_STEP_MS));
  const keys = fallbackOf(entry);
  if (!keys) throw new KeySetUnavailableError("the key set could not be read and no key is in hand");
  return entry.failedAt >= since ? fromFallback(keys, header, token, "the read failed") : keys(header, token);
}

/**
 * The key resolver for `jwtVerify`: jose's remote set (fetch on first use, again after `cacheMs`, and on
 * an unknown `kid` once the cooldown passed), at most one read under way per isolate or process (on
 * workerd too, where jose cannot share one): while it runs, a token whose key is in hand is verified at
 * once (a slow key set holds nobody), and one whose key is not waits for that read. When the key set
 * cannot be read, the keys in hand are used (stale or not) and no read is tried again for a cooldown;
 * with no key in hand that fits, it throws {@link KeySetUnavailableError} (with no key at all, the next
 * read is tried 2 s later at the soonest). A token's own faults (no key with its `kid`, unsupported
 * `alg`) are jose's errors, for a 401.
 *
 * @example
 * await jwtVerify(token, keyResolver(keySetFor(memory.keySets, settings)), options);
 */
export function keyResolver(entry: KeySetEntry): JWTVerifyGetKey {
  return async (header, token) => {
    const inHand = fallbackOf(entry);
    const now = Date.now();
    const sinceFailure = now - entry.failedAt;
    if (inHand && sinceFailure < entry.settings.cooldownMs)
      return fromFallback(inHand, header, token, "the key set was down moments ago");
    if (!inHand && sinceFailure < Math.min(EMPTY_RETRY_MS, entry.settings.cooldownMs))
      throw new KeySetUnavailableError("the key set was down moments ago and no key is in hand");
    const age = now - (entry.cache.uat ?? Number.NEGATIVE_INFINITY);
    if (inHand && age < entry.settings.cacheMs) {
      // fresh keys: no read unless the token names a key id they lack, and the cooldown has passed
      try {
        return await inHand(header, token);
      } catch (error) {
        if (!noMatchingKey(error) || age < entry.settings.cooldownMs) throw error;
      }
    }
    if (entry.readingUntil > now) {
      if (!inHand) return afterTheRead(entry, header, token);
      try {
        return await inHand(header, token); // stale or not: the read under way brings the fresh ones
      } catch (error) {
        if (!noMatchingKey(error)) throw error;
        return afterTheRead(entry, header, token);
      }
    }
    entry.readingUntil = now + FETCH_TIMEOUT_MS + 500;
    try {
      return await entry.remote(header, token);
    } catch (error) {
      if (!isReadFailure(error)) throw error;
      entry.failedAt = Date.now();
      const last = fallbackOf(entry);
      if (!last) throw new KeySetUnavailableError("the key set cannot be read", { cause: error });
      return fromFallback(last, header, token, error);
    } finally {
      entry.readingUntil = 0;
    }
  };
}
