const imported = new Map<string, CryptoKey>();

/**
 * The HMAC-SHA256 key of a secret, imported once per isolate or process. Only finished keys are
 * shared: requests that find none import their own (a few microseconds of CPU), so no request ever
 * waits on a promise another request started (workerd cancels such requests).
 *
 * @example
 * const key = await hmacKey(config.JWT_SECRET, "verify");
 */
export async function hmacKey(secret: string, usage: "sign" | "verify"): Promise<CryptoKey> {
  const id = `${usage}\u0000${secret}`;
  const known = imported.get(id);
  if (known) return known;
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    [usage],
  );
  if (!imported.has(id)) imported.set(id, key);
  return key;
}
