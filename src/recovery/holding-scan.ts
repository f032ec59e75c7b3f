import type { Memory } from "../memory/memory";

/** Holdings looked at per stats reading: the reading's cost stays flat whatever the number of buyers. */
export const HOLDINGS_PER_READING = 1_000;

type Scan = Memory["holdingScans"] extends Map<string, infer S> ? S : never;

/**
 * Where this process's walk through a sale's Redis holdings is (a fresh walk starts at cursor "0");
 * `of: "variants"`, its walk through the holdings per variant (`vholdings`).
 */
export function holdingScanOf(memory: Memory, saleId: string, of: "sale" | "variants" = "sale"): Scan {
  const id = of === "sale" ? saleId : `${saleId} variants`;
  let scan = memory.holdingScans.get(id);
  if (!scan) {
    scan = { cursor: "0", seen: new Set(), last: new Set() };
    memory.holdingScans.set(id, scan);
  }
  return scan;
}

/**
 * Takes one HSCAN chunk of a sale's Redis holdings into the walk and answers the fields (users; for the
 * holdings per variant, "<variantId>:<userId>") over `limit` (a function of the field: each variant's cap):
 * those seen over it in this pass or in the last whole pass, unless this chunk saw them back under it.
 * A small sale's holdings come in one chunk (each reading a whole pass); a large one's over a few
 * readings. Redis takes a user over the limit only through a late write after a Redis loss, which is
 * rare and lasting, so a pass of a few seconds still shows it on the operator page.
 */
export function takeHoldingChunk(
  scan: Scan,
  reply: [string | number, (string | number)[]],
  limit: number | ((field: string) => number),
): string[] {
  const [cursor, flat] = reply;
  const limitOf = typeof limit === "number" ? () => limit : limit;
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const userId = String(flat[i]);
    if (Number(flat[i + 1]) > limitOf(userId)) scan.seen.add(userId);
    else {
      scan.seen.delete(userId);
      scan.last.delete(userId);
    }
  }
  scan.cursor = String(cursor);
  const over = [...new Set([...scan.last, ...scan.seen])];
  if (scan.cursor === "0") {
    scan.last = scan.seen;
    scan.seen = new Set();
  }
  return over;
}
