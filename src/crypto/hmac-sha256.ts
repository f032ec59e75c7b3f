import { Buffer } from "node:buffer";
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { type _HMAC, hmac } from "@noble/hashes/hmac.js";
import { type _SHA256, sha256 } from "@noble/hashes/sha2.js";

/**
 * Synchronous HMAC-SHA256 and base64url decoding for the shopper token check and the webhook
 * signatures, each the fastest a runtime has (measured per token, 2026-11: node:crypto 1–2 µs on Bun
 * and ~3 µs on Node, but 11–17 µs on Deno, whose node:crypto goes through Buffer pools and ops;
 * @noble/hashes' pure-JS HMAC from a key state absorbed once, ~4 µs there). `Uint8Array.fromBase64` (Bun, Deno, workerd) decodes in under a
 * microsecond; Node 22 lacks it and uses Buffer.
 */
const onDeno = typeof (globalThis as { Deno?: unknown }).Deno === "object";

type FromBase64 = (text: string, options: { alphabet: "base64url" }) => Uint8Array;
const fromBase64 = (Uint8Array as unknown as { fromBase64?: FromBase64 }).fromBase64;

const encoder = new TextEncoder();

type Keyed = { base: _HMAC<_SHA256>; scratch: _HMAC<_SHA256> };

/**
 * Per secret (constant input, memoised): a noble HMAC with the key's inner and outer pads absorbed, and
 * a scratch instance each call resets from it (the call is synchronous: no other call can interleave).
 * A text secret is kept by its text, a byte key by its array (the caller keeps one array per key).
 */
const keyed = new Map<string, Keyed>();
const keyedBytes = new WeakMap<Uint8Array, Keyed>();
const KEYS_KEPT = 8;

function keyState(secret: string | Uint8Array): Keyed {
  const found = typeof secret === "string" ? keyed.get(secret) : keyedBytes.get(secret);
  if (found) return found;
  const base = hmac.create(sha256, typeof secret === "string" ? encoder.encode(secret) : secret);
  const state = { base, scratch: base.clone() };
  if (typeof secret !== "string") keyedBytes.set(secret, state);
  else if (keyed.size < KEYS_KEPT) keyed.set(secret, state);
  return state;
}

/** The pure-JS HMAC-SHA256 (what Deno uses), exported for the test that holds it to node:crypto's. */
export function jsHmacSha256(secret: string | Uint8Array, message: string): Uint8Array {
  const key = keyState(secret);
  key.scratch = key.base._cloneInto(key.scratch);
  return key.scratch.update(encoder.encode(message)).digest();
}

/**
 * HMAC-SHA256 of `message` (as UTF-8) under `secret` (a text, as UTF-8, or the key's bytes).
 *
 * @example
 * const mac = hmacSha256("secret", "header.payload"); // 32 bytes
 */
export function hmacSha256(secret: string | Uint8Array, message: string): Uint8Array {
  if (onDeno) return jsHmacSha256(secret, message);
  return createHmac("sha256", secret).update(message).digest();
}

/**
 * SHA-256 of `text` (as UTF-8): node:crypto, or noble's on Deno (as the HMAC above).
 *
 * @example
 * const digest = sha256Of("body"); // 32 bytes
 */
export function sha256Of(text: string): Uint8Array {
  if (onDeno) return sha256(encoder.encode(text));
  return createHash("sha256").update(text).digest();
}

/**
 * The base64url text of `bytes`, without padding.
 *
 * @example
 * base64UrlText(new Uint8Array([104, 105])); // "aGk"
 */
export function base64UrlText(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url");
}

/**
 * The bytes of a base64url text (padding allowed), or null when it is not base64url.
 *
 * @example
 * base64UrlBytes("aGk"); // Uint8Array [104, 105]
 */
export function base64UrlBytes(text: string): Uint8Array | null {
  if (fromBase64) {
    try {
      return fromBase64(text, { alphabet: "base64url" });
    } catch {
      return null;
    }
  }
  return Buffer.from(text, "base64url");
}

/** Whether two byte strings are equal, in time that depends only on their lengths. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  if (!onDeno) return timingSafeEqual(a, b);
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}
