import { type JWTPayload, jwtVerify } from "jose";
import type { IdentityDeps } from "../services";
import { KeySetUnavailableError, keyResolver, keySetFor } from "./key-set";

/** The algorithms a token checked against the shop's key set may use: never HS256, never `none`. */
export const KEY_SET_ALGORITHMS = ["RS256", "ES256", "EdDSA"];

/** A token checked against the key set: its claims, or why not (`unavailable`: the key set cannot be read). */
export type KeySetVerdict =
  | { ok: true; payload: JWTPayload }
  | { ok: false; reason: "invalid" | "unavailable" };

/**
 * Verifies an RS256 / ES256 / EdDSA shopper token against the key set at JWT_JWKS_URL (remembered in
 * `memory.keySets`): signature, `exp` (required), `nbf`, `iss` = JWT_ISSUER and `aud` = JWT_AUDIENCE
 * (both required in this mode: src/env.ts; an operator's token is checked for OPERATOR_JWT_AUDIENCE
 * instead), `sub` present.
 *
 * @example
 * const verdict = await verifyWithKeySet(token, deps);
 * if (!verdict.ok && verdict.reason === "unavailable") // 503, not 401
 */
export async function verifyWithKeySet(
  token: string,
  deps: IdentityDeps,
  audience = deps.config.JWT_AUDIENCE,
): Promise<KeySetVerdict> {
  const { config } = deps;
  if (!config.JWT_JWKS_URL || !config.JWT_ISSUER || !audience) return { ok: false, reason: "invalid" };
  const entry = keySetFor(deps.memory.keySets, {
    url: config.JWT_JWKS_URL,
    cacheMs: config.JWT_JWKS_CACHE_SECONDS * 1000,
    cooldownMs: config.JWT_JWKS_COOLDOWN_SECONDS * 1000,
  });
  try {
    const { payload } = await jwtVerify(token, keyResolver(entry), {
      algorithms: KEY_SET_ALGORITHMS,
      issuer: config.JWT_ISSUER,
      audience,
      requiredClaims: ["exp", "sub"],
    });
    return { ok: true, payload };
  } catch (error) {
    return { ok: false, reason: error instanceof KeySetUnavailableError ? "unavailable" : "invalid" };
  }
}
