/**
 * The draw, as a pure function anyone can run again: entries are ranked by SHA-256(seed + ":" + entry)
 * (lowest first, hex), ties (never seen) by the entry itself. The seed is 32 random bytes in hex; its
 * SHA-256 is published from the sale's creation, the seed itself after the draw, with the sorted entry
 * list and its SHA-256 (of the entries joined by "\n"). A `queue` sale shuffles the tickets taken before
 * its start with the same function.
 *
 * @example
 * const order = await drawOrder(seed, entries); // order[0] is admitted first, then the backups in turn
 */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A fresh secret seed: 32 random bytes, hex. */
export function newSeed(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The entry list as published: sorted (by UTF-16 code units, JavaScript's default). */
export function sortedEntries(entries: readonly string[]): string[] {
  return [...entries].sort();
}

/** SHA-256 of the sorted entries joined by "\n". */
export function entriesHash(sorted: readonly string[]): Promise<string> {
  return sha256Hex(sorted.join("\n"));
}

/** The entries in draw order: by SHA-256(seed + ":" + entry), then by the entry. */
export async function drawOrder(seed: string, entries: readonly string[]): Promise<string[]> {
  const scored = await Promise.all(entries.map(async (e) => ({ e, score: await sha256Hex(`${seed}:${e}`) })));
  scored.sort((a, b) =>
    a.score < b.score ? -1 : a.score > b.score ? 1 : a.e < b.e ? -1 : a.e > b.e ? 1 : 0,
  );
  return scored.map((s) => s.e);
}
