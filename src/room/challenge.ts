import { createChallenge, extractParams, verifySolution } from "altcha-lib/v1";
import type { Config } from "../env";

/** ALTCHA's challenge and solution payload (altcha-lib/v1's types, not exported from its entry). */
type Challenge = Awaited<ReturnType<typeof createChallenge>>;
type Payload = Exclude<Parameters<typeof verifySolution>[0], string>;

type ChallengeConfig = Pick<Config, "ALTCHA_HMAC_KEY" | "JWT_SECRET" | "ALTCHA_MAX_NUMBER">;

/** How long a challenge may be solved and used. */
const CHALLENGE_LIFE_MS = 10 * 60 * 1000;

/** ALTCHA_HMAC_KEY, or a key derived from JWT_SECRET (a label in front: never the secret itself). */
function hmacKeyOf(config: ChallengeConfig): string {
  return config.ALTCHA_HMAC_KEY ?? `flash-sale altcha key\u0000${config.JWT_SECRET}`;
}

/** The difficulty (ALTCHA's maxnumber): ALTCHA_MAX_NUMBER, doubled per 1,000 tickets taken, at most 64 times. */
export function difficultyFor(config: ChallengeConfig, depth: number): number {
  return config.ALTCHA_MAX_NUMBER * 2 ** Math.min(6, Math.floor(Math.max(0, depth) / 1000));
}

/**
 * An ALTCHA challenge (altcha-lib, SHA-256) bound to the sale and the shopper through its salt's
 * parameters, signed with the ALTCHA key, expiring in 10 minutes.
 */
export function joinChallenge(
  config: ChallengeConfig,
  at: { saleId: string; userId: string; depth: number; now: number },
): Promise<Challenge> {
  return createChallenge({
    algorithm: "SHA-256",
    hmacKey: hmacKeyOf(config),
    maxnumber: difficultyFor(config, at.depth),
    params: { sale: at.saleId, user: at.userId },
    expires: new Date(at.now + CHALLENGE_LIFE_MS),
  });
}

/**
 * Whether `solution` (the ALTCHA payload: base64 JSON as the widget submits it, or the object) solves a
 * challenge this server made for this sale and shopper, unexpired. CPU only: no store is asked.
 */
export async function solvesJoinChallenge(
  config: ChallengeConfig,
  solution: unknown,
  at: { saleId: string; userId: string },
): Promise<boolean> {
  const payload = parsePayload(solution);
  if (payload?.algorithm !== "SHA-256") return false;
  const params = extractParams(payload);
  if (params.sale !== at.saleId || params.user !== at.userId) return false;
  return verifySolution(payload, hmacKeyOf(config), true).catch(() => false);
}

function parsePayload(solution: unknown): Payload | null {
  let value = solution;
  if (typeof value === "string") {
    if (value.length > 4096) return null;
    try {
      value = JSON.parse(atob(value));
    } catch {
      return null;
    }
  }
  if (typeof value !== "object" || value === null) return null;
  const p = value as Record<string, unknown>;
  const text = (k: string) => typeof p[k] === "string" && (p[k] as string).length <= 1024;
  if (!text("algorithm") || !text("challenge") || !text("salt") || !text("signature")) return null;
  if (typeof p.number !== "number" || !Number.isSafeInteger(p.number)) return null;
  return p as unknown as Payload;
}
