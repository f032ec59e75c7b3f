/** The terminal tables of the bench's reports, and the rounding they share. */

export type Cell = string | number | null | undefined;

/** `v` rounded to `digits` decimals. */
export const round = (v: number, digits = 1) => Math.round(v * 10 ** digits) / 10 ** digits;

/** A figure with thousands separators, "–" when there is none. */
export const fmt = (v: number | null | undefined) =>
  v === null || v === undefined ? "–" : v.toLocaleString("en-US");

/** Columns aligned under a ruled head: the first `leftColumns` to the left, the rest to the right. */
export function table(head: string[], rows: Cell[][], leftColumns = 1): string {
  const text = (c: Cell) =>
    c === null || c === undefined ? "–" : typeof c === "number" ? c.toLocaleString("en-US") : c;
  const all = [head, ...rows.map((row) => row.map(text))];
  const width = head.map((_, i) => Math.max(...all.map((row) => (row[i] ?? "").length)));
  const line = (row: string[]) =>
    row.map((c, i) => (i < leftColumns ? c.padEnd(width[i] ?? 0) : c.padStart(width[i] ?? 0))).join("  ");
  return [line(head), line(head.map((_, i) => "─".repeat(width[i] ?? 0))), ...all.slice(1).map(line)]
    .map((l) => `  ${l}`)
    .join("\n");
}
