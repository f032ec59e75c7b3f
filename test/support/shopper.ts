import { SignJWT } from "jose";
import { exampleSecrets } from "../../local/worker-runtime";

const secrets = exampleSecrets();
export const JWT_SECRET = secrets.JWT_SECRET as string;
export const ADMIN_TOKEN = secrets.ADMIN_TOKEN as string;

/** Mints a shopper JWT the way a shop's sign-in would (HS256 with JWT_SECRET, `sub` = user id). */
export async function shopperToken(
  userId: string,
  opts: { secret?: string; expiresInSeconds?: number; claims?: Record<string, unknown> } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ ...(userId ? { sub: userId } : {}), ...opts.claims })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt(now)
    .setExpirationTime(now + (opts.expiresInSeconds ?? 3600))
    .sign(new TextEncoder().encode(opts.secret ?? JWT_SECRET));
}

/** An unsigned `alg: none` token for `sub` (must be refused). */
export function unsignedToken(userId: string): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${b64({ alg: "none", typ: "JWT" })}.${b64({ sub: userId, exp: Math.floor(Date.now() / 1000) + 3600 })}.`;
}
