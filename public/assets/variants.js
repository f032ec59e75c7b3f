import { formatMoney } from "./format.js";

/**
 * A sale's variants as the pages use them. A sale of one product has one variant (`"default"`); a body
 * from before variants has none, and stands for its own single variant.
 *
 * @example
 * variantsOf(sale).filter((v) => !isGone(v)).map((v) => v.name); // ["40", "41", "43"]
 */
export function variantsOf(sale) {
  if (Array.isArray(sale?.variants) && sale.variants.length > 0) return sale.variants;
  return [
    {
      variantId: "default",
      name: sale.name,
      priceCents: sale.priceCents,
      remaining: sale.remaining,
      status: sale.status,
    },
  ];
}

/** Whether the shopper chooses among several variants (a picker and a cart) or buys the one product. */
export const hasChoice = (sale) => Array.isArray(sale?.variants) && sale.variants.length > 1;

export const variantById = (sale, variantId) => variantsOf(sale).find((v) => v.variantId === variantId);

/** A variant with nothing left: greyed everywhere, never added to a cart. */
export const isGone = (variant) => variant.status === "sold_out" || variant.remaining <= 0;

/** The sale's price as one line: "$129.00", or "$119.00 – $149.00" when its variants differ. */
export function priceLine(sale) {
  const prices = variantsOf(sale).map((v) => v.priceCents);
  const low = Math.min(...prices);
  const high = Math.max(...prices);
  return low === high ? formatMoney(low) : `${formatMoney(low)} – ${formatMoney(high)}`;
}

/** What a variant says about its stock: "3 left", "Sold out". */
export function stockLabel(variant) {
  if (isGone(variant)) return "Sold out";
  return `${variant.remaining} left`;
}
