import type { VariantDefinition } from "../catalog/sale-record";
import type { ReserveLine } from "../stock/reserve-call";

export { variantsOf } from "../catalog/sale-variants";

/** What a buy asks for, as the route read it: units of a one-variant sale, one variant, or a cart. */
export type CartRequest =
  | { kind: "quantity"; quantity: number }
  | { kind: "lines"; lines: { variantId: string; quantity: number }[] };

/** A cart checked against the sale: the script's lines, their units, and whether the sale keeps units per variant. */
export type Cart = { lines: ReserveLine[]; quantity: number; perVariant: boolean };

export type CartCheck =
  | { kind: "cart"; cart: Cart }
  /** a line names a variant the sale does not have */
  | { kind: "unknown_variant"; variantId: string }
  /** a bare quantity on a sale of several variants: which one is not said */
  | { kind: "variant_required" };

/**
 * The request's lines against the sale's variants: each line gets its variant's price and own cap.
 * A sale of one variant takes a bare quantity, or its one variant by id; a sale of several needs the
 * variant named. An empty list (a sale Redis does not hold) passes a bare quantity through unchecked.
 */
export function checkCart(variants: VariantDefinition[], request: CartRequest): CartCheck {
  const perVariant = variants.length > 1;
  if (request.kind === "quantity") {
    if (perVariant) return { kind: "variant_required" };
    const only = variants[0];
    const lines = only ? [lineOf(only, request.quantity)] : [];
    return { kind: "cart", cart: { lines, quantity: request.quantity, perVariant } };
  }
  const byId = new Map(variants.map((v) => [v.variantId, v]));
  const lines: ReserveLine[] = [];
  let quantity = 0;
  for (const asked of request.lines) {
    const variant = byId.get(asked.variantId);
    if (!variant) return { kind: "unknown_variant", variantId: asked.variantId };
    lines.push(lineOf(variant, asked.quantity));
    quantity += asked.quantity;
  }
  return { kind: "cart", cart: { lines, quantity, perVariant } };
}

function lineOf(variant: VariantDefinition, quantity: number): ReserveLine {
  return {
    variantId: variant.variantId,
    quantity,
    priceCents: variant.priceCents,
    cap: variant.perUserLimit ?? 0,
  };
}
