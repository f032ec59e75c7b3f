/**
 * A weak entity tag for a JSON body, from everything in it but its `serverTime` fields (the clock
 * reading changes with every answer; the tag changes only when something a reader acts on does).
 * Weak (`W/"…"`), since two answers with one tag may differ in those clock readings.
 *
 * @example
 * const tag = await weakEtag({ sales, serverTime }); // W/"q1f0…"
 */
export async function weakEtag(body: unknown): Promise<string> {
  const text = JSON.stringify(body, (key, value) => (key === "serverTime" ? undefined : value));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  const bytes = new Uint8Array(digest).slice(0, 16);
  const b64 = btoa(String.fromCharCode(...bytes));
  return `W/"${b64.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "")}"`;
}

/**
 * Whether an `If-None-Match` header names `tag` (weak comparison, as RFC 9110 asks for GET): `*`, or
 * one of its comma-separated tags equal to it with or without the `W/` prefix.
 */
export function ifNoneMatchHits(header: string | undefined, tag: string): boolean {
  if (!header) return false;
  const opaque = (t: string) => t.trim().replace(/^W\//, "");
  const wanted = opaque(tag);
  return header.split(",").some((t) => t.trim() === "*" || opaque(t) === wanted);
}
