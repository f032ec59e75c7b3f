import {
  type CompactJWSHeaderParameters,
  createLocalJWKSet,
  createRemoteJWKSet,
  type ExportedJWKSCache,
  type FlattenedJWSInput,
  type JWTVerifyGetKey,
  jwksCache,
  type RemoteJWKSet,
} from "jose";
import { JOSEError, JWKSInvalid, JWKSTimeout } from "jose/errors";

/** How long one read of the key set may take before it counts as down. */
const FETCH_TIMEOUT_MS = 3_000;

/** With no key in hand, how long after a failed read the next request may try again (not every request). */
const EMPTY_RETRY_MS = 2_000;

/** How the shop's key set is read: its URL, how long keys are used, the least time between two reads. */
export type KeySetSettings = { url: string; cacheMs: number; cooldownMs: number };

/**
 * One key set as this isolate or process knows it (a field of `Memory`): jose's remote set, the keys it
 * last fetched (finished values jose writes into `cache`), and the last time a read failed. jose starts a
 * read of its own for each request on workerd (it never hands one request another's pending fetch there),
 * so the set may be shared; on Deno and Bun concurrent reads are shared, which those runtimes allow.
 */
export type KeySetEntry = {
  settings: KeySetSettings;
  remote: RemoteJWKSet;
  cache: ExportedJWKSCache | Record<string, never>;
  /** the keys last fetched, ready to verify while the key set cannot be read: by `cache.uat` */
  fallback: { uat: number; getKey: JWTVerifyGetKey } | null;
  failedAt: number;
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
  });
  return { settings, remote, cache, fallback: null, failedAt: Number.NEGATIVE_INFINITY };
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

/**
 * The key resolver for `jwtVerify`: jose's remote set (fetch on first use, again after `cacheMs`, and on
 * an unknown `kid` once the cooldown passed). When the key set cannot be read, the keys in hand are used
 * (stale or not) and no read is tried again for a cooldown; with no key in hand that fits, it throws
 * {@link KeySetUnavailableError} (with no key at all, the next read is tried 2 s later at the soonest).
 * A token's own faults (no key with its `kid`, unsupported `alg`) are jose's errors, for a 401.
 *
 * @example
 * await jwtVerify(token, keyResolver(keySetFor(memory.keySets, settings)), options);
 */
export function keyResolver(entry: KeySetEntry): JWTVerifyGetKey {
  return async (header, token) => {
    const inHand = fallbackOf(entry);
    const sinceFailure = Date.now() - entry.failedAt;
    if (inHand && sinceFailure < entry.settings.cooldownMs)
      return fromFallback(inHand, header, token, "the key set was down moments ago");
    if (!inHand && sinceFailure < Math.min(EMPTY_RETRY_MS, entry.settings.cooldownMs))
      throw new KeySetUnavailableError("the key set was down moments ago and no key is in hand");
    try {
      return await entry.remote(header, token);
    } catch (error) {
      if (!isReadFailure(error)) throw error;
      entry.failedAt = Date.now();
      const last = fallbackOf(entry);
      if (!last) throw new KeySetUnavailableError("the key set cannot be read", { cause: error });
      return fromFallback(last, header, token, error);
    }
  };
}
