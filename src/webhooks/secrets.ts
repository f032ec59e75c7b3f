import { Webhook } from "standardwebhooks";

/** Bytes of randomness in a signing secret (Standard Webhooks asks for 24 to 64). */
const SECRET_BYTES = 32;

/** How long a rotated-out secret keeps signing, so receivers can switch without losing a delivery. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;

/** A new signing secret: `whsec_` and the base64 of 32 random bytes, as Standard Webhooks writes them. */
export function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(SECRET_BYTES));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

/**
 * The `webhook-signature` header for one message: a `v1,<signature>` for each secret that is valid,
 * space-separated (the current one first), so a receiver holding either verifies it.
 *
 * @example
 * const header = signatures([current, previous], "msg_1", new Date(), body); // "v1,abc… v1,def…"
 */
export function signatures(secrets: string[], msgId: string, at: Date, body: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(msgId, at, body)).join(" ");
}
