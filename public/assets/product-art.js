/** Product artwork for the demo shop (no images): a gradient from a small palette and a monogram. */
const PALETTE = [
  ["#f0776c", "#b5281f"],
  ["#6b8cff", "#3340b8"],
  ["#f6b756", "#c2621b"],
  ["#45c1a4", "#137a64"],
  ["#b486f0", "#6a3bb8"],
  ["#5f6b7d", "#232a36"],
];

/** `--art-a` / `--art-b` custom properties for a sale, stable per product name. */
export function productArtStyle(sale) {
  let hash = 17;
  for (const ch of sale.name) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  const [a, b] = PALETTE[hash % PALETTE.length];
  return `--art-a:${a};--art-b:${b}`;
}

export function productInitials(name) {
  const words = name.trim().split(/\s+/).filter(Boolean);
  return (
    words
      .slice(0, 2)
      .map((w) => w[0])
      .join("")
      .toUpperCase() || "?"
  );
}
