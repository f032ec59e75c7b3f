/**
 * One delivery attempt of the local QStash server, signed exactly as QStash signs it, so the real
 * `Receiver.verify` accepts it.
 *
 * `Upstash-Signature` is an HS256 JWT over the signing key's UTF-8 bytes with claims `iss: "Upstash"`,
 * `sub`: the destination URL, `iat` = `nbf` = now, `exp` = now + 5 minutes, a unique `jti`, and
 * `body`: base64url(sha256(raw body)) without padding. The request also carries `Upstash-Message-Id`,
 * `Upstash-Retried` (0 on the first attempt) and the publisher's forwarded headers.
 *
 * @example
 * const signature = await signDelivery({ signingKey, url: "http://127.0.0.1:8787/api/jobs/order", body });
 * const outcome = await deliver(message, { signingKey, signal }); // { status, headers, body }
 */
import { createHash, randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import { errorMessage } from "./http-util";
import type { Outcome, Tracked } from "./qstash-message";

export async function signDelivery(input: {
  signingKey: string;
  url: string;
  body: Uint8Array;
  now?: number;
}): Promise<string> {
  const now = Math.floor((input.now ?? Date.now()) / 1000);
  const bodyHash = createHash("sha256").update(input.body).digest("base64url");
  return new SignJWT({ body: bodyHash })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer("Upstash")
    .setSubject(input.url)
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + 300)
    .setJti(`jwt_${randomUUID().replaceAll("-", "")}`)
    .sign(new TextEncoder().encode(input.signingKey));
}

/** Sends `msg` to its destination once; never throws (no answer is status 0, the error as body). */
export async function deliver(
  msg: Tracked,
  options: { signingKey: string; signal: AbortSignal; fetch?: typeof fetch },
): Promise<Outcome> {
  try {
    const signature = await signDelivery({ signingKey: options.signingKey, url: msg.url, body: msg.body });
    const res = await (options.fetch ?? fetch)(msg.url, {
      method: msg.method,
      headers: {
        ...msg.headers,
        "Upstash-Message-Id": msg.messageId,
        "Upstash-Retried": String(msg.retried),
        "Upstash-Signature": signature,
        "User-Agent": "Upstash-QStash",
      },
      body: msg.method === "GET" || msg.method === "HEAD" ? undefined : new Uint8Array(msg.body),
      redirect: "manual",
      signal: AbortSignal.any([options.signal, AbortSignal.timeout(msg.timeoutMs)]),
    });
    return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
  } catch (error) {
    return { status: 0, headers: new Headers(), body: Buffer.from(errorMessage(error)) };
  }
}
