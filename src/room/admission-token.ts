import { errors, type JWTPayload, jwtVerify, SignJWT } from "jose";
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
  const read = await readAdmission(config, token, at);
  return read.kind === "admitted" ? read.admission : null;
}

/**
 * What an `Admission` header holds for `userId` and `saleId` at `now`: a running admission; one this
 * engine signed for them whose signed end has passed (`ticketId` names it: a pause may have moved its
 * end since, and a keyed retry may still be owed its first answer); or nothing of theirs (missing,
 * forged, another sale's or shopper's). No store is asked.
 */
export async function readAdmission(
  config: Pick<Config, "ADMISSION_SECRET" | "JWT_SECRET">,
  token: string | null | undefined,
  at: { saleId: string; userId: string; now: number },
): Promise<
  { kind: "admitted"; admission: Admission } | { kind: "lapsed"; ticketId: string } | { kind: "none" }
> {
  if (!token || token.length > 2048) return { kind: "none" };
  const key = await keyOf(config);
  const verify = (asOf: number) =>
    jwtVerify(token, key, {
      algorithms: ["HS256"],
      typ: TYPE,
      audience: `sale:${at.saleId}`,
      subject: at.userId,
      currentDate: new Date(asOf),
    });
  let payload: JWTPayload;
  try {
    payload = (await verify(at.now)).payload;
  } catch (error) {
    if (!(error instanceof errors.JWTExpired)) return { kind: "none" };
    // lapsed: checked again as of its last valid moment, so its signature, sale and shopper still count
    const until = (error.payload as JWTPayload).until;
    if (typeof until !== "number" || !Number.isFinite(until)) return { kind: "none" };
    try {
      payload = (await verify(Math.min(at.now, until - 1))).payload;
    } catch {
      return { kind: "none" };
    }
  }
  const { tid, units, until } = payload;
  if (typeof until !== "number" || typeof units !== "number" || !Number.isInteger(units) || units < 1)
    return { kind: "none" };
  if (until <= at.now) return { kind: "lapsed", ticketId: String(tid) };
  return {
    kind: "admitted",
    admission: { saleId: at.saleId, userId: at.userId, ticketId: String(tid), units, expiresAt: until },
  };
}
