import { Buffer } from "node:buffer";
import { hmacSha256 } from "../crypto/hmac-sha256";

/** Bytes of randomness in a signing secret (Standard Webhooks asks for 24 to 64). */
const SECRET_BYTES = 32;

/** How long a rotated-out secret keeps signing, so receivers can switch without losing a delivery. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;

const PREFIX = "whsec_";

/** A new signing secret: `whsec_` and the base64 of 32 random bytes, as Standard Webhooks writes them. */
export function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(SECRET_BYTES));
  return `${PREFIX}${btoa(String.fromCharCode(...bytes))}`;
}

/** The key bytes of the secrets in use, decoded once each (one array per secret: the HMAC keeps its state by it). */
const keys = new Map<string, Uint8Array>();
const KEYS_KEPT = 64;

/** Standard Webhooks' secrets carry 24 to 64 bytes: anything else (a corrupted row) signs nothing. */
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const MIN_KEY_BYTES = 24;

function keyOf(secret: string): Uint8Array {
  let key = keys.get(secret);
  if (!key) {
    const text = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
    key = BASE64.test(text) ? new Uint8Array(Buffer.from(text, "base64")) : new Uint8Array();
    if (key.length < MIN_KEY_BYTES)
      throw new Error("a webhook secret that is not 24 bytes or more of base64");
    if (keys.size >= KEYS_KEPT) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

/**
 * The `webhook-signature` header for one message: a `v1,<signature>` for each secret that is valid,
 * space-separated (the current one first), so a receiver holding either verifies it. Each signature is
 * Standard Webhooks' `base64(HMAC-SHA256(key, "<msgId>.<unix seconds>.<body>"))`, the key being the
 * secret's base64 after `whsec_` (what the `standardwebhooks` library signs, held to it by
 * test/unit/webhook-signatures.test.ts), with the runtime's fastest HMAC (src/crypto/hmac-sha256.ts).
 * Throws for a secret that is not 24 bytes or more of base64 (nothing is sent signed with a weak key).
 *
 * @example
 * const header = signatures([current, previous], "msg_1", new Date(), body); // "v1,abc… v1,def…"
 */
export function signatures(secrets: string[], msgId: string, at: Date, body: string): string {
  const signed = `${msgId}.${Math.floor(at.getTime() / 1000)}.${body}`;
  return secrets
    .map((secret) => `v1,${Buffer.from(hmacSha256(keyOf(secret), signed)).toString("base64")}`)
    .join(" ");
}
