import { jwtVerify, SignJWT } from "jose";
import type { Config } from "../env";

/** What an admission grants: `units` of sale `saleId` to `userId`, until `expiresAt` (ms). */
export type Admission = {
  saleId: string;
  userId: string;
  ticketId: string;
  units: number;
  expiresAt: number;
};

const TYPE = "admission+jwt";
const keys = new Map<string, Uint8Array>();

/**
 * The admission signing key: ADMISSION_SECRET, or SHA-256 of a label and JWT_SECRET (never JWT_SECRET
 * itself: an admission must not pass as a shopper's token). Memoized per secret (constant input).
 */
async function keyOf(config: Pick<Config, "ADMISSION_SECRET" | "JWT_SECRET">): Promise<Uint8Array> {
  const secret = config.ADMISSION_SECRET ?? `flash-sale admission key\u0000${config.JWT_SECRET}`;
  const known = keys.get(secret);
  if (known) return known;
  const raw = config.ADMISSION_SECRET
    ? new TextEncoder().encode(secret)
    : new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret)));
  keys.set(secret, raw);
  return raw;
}

/**
 * The `Admission` header's token (jose, HS256, `typ` admission+jwt, audience the sale): the same
 * admission always signs to the same token (no `iat`), so every process hands the shopper the same one.
 */
export async function signAdmission(
  config: Pick<Config, "ADMISSION_SECRET" | "JWT_SECRET">,
  a: Admission,
): Promise<string> {
  return new SignJWT({ tid: a.ticketId, units: a.units, until: a.expiresAt })
    .setProtectedHeader({ alg: "HS256", typ: TYPE })
    .setSubject(a.userId)
    .setAudience(`sale:${a.saleId}`)
    .setExpirationTime(Math.ceil(a.expiresAt / 1000))
    .sign(await keyOf(config));
}

/**
 * The admission a token grants `userId` for `saleId` at `now` (the store's clock), or null when it is
 * missing, forged, for another sale or shopper, or lapsed. No store is asked.
 */
export async function verifyAdmission(
  config: Pick<Config, "ADMISSION_SECRET" | "JWT_SECRET">,
  token: string | null | undefined,
  at: { saleId: string; userId: string; now: number },
): Promise<Admission | null> {
  if (!token || token.length > 2048) return null;
  try {
    const { payload } = await jwtVerify(token, await keyOf(config), {
      algorithms: ["HS256"],
      typ: TYPE,
      audience: `sale:${at.saleId}`,
      subject: at.userId,
      currentDate: new Date(at.now),
    });
    const { tid, units, until } = payload;
    if (typeof until !== "number" || until <= at.now) return null;
    if (typeof units !== "number" || !Number.isInteger(units) || units < 1) return null;
    return { saleId: at.saleId, userId: at.userId, ticketId: String(tid), units, expiresAt: until };
  } catch {
    return null;
  }
}
