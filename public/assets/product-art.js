/**
 * Product artwork: the sale's (or the picked variant's) image when it has one, else a gradient from a
 * small palette and a monogram.
 */
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

/**
 * The image a sale shows instead of its monogram: the picked variant's, else the sale's, else none.
 * An `https:` URL or a path on this origin (what the API accepts); anything else is not shown.
 */
export function productImageUrl(sale, variant = null) {
  const url = variant?.imageUrl || sale.imageUrl;
  if (typeof url !== "string") return null;
  return url.startsWith("https://") || (url.startsWith("/") && !url.startsWith("//")) ? url : null;
}

/**
 * Shows `url` in the artwork's `img` over the monogram, which comes back while there is no image or the
 * image fails to load. Setting the same URL again does nothing.
 */
export function showProductImage(img, initials, url) {
  if (img.dataset.src === (url ?? "")) return;
  img.dataset.src = url ?? "";
  img.hidden = true;
  initials.hidden = false;
  if (!url) {
    img.removeAttribute("src");
    return;
  }
  img.onload = () => {
    if (img.dataset.src !== url) return;
    img.hidden = false;
    initials.hidden = true;
  };
  img.onerror = () => {
    if (img.dataset.src === url) img.hidden = true;
  };
  img.src = url;
}
