import { isGone, variantById } from "./variants.js";

/** The contract's cap on the lines of one buy. */
export const MAX_LINES = 10;

/**
 * The shopper's cart on a sale of several variants: lines `{ variantId, quantity }` in the order they were
 * picked, each variant at most once. Bought with one `{ items }` buy, reserved all or nothing.
 *
 * @example
 * const cart = createCart();
 * cart.add("42"); cart.set("42", 2); cart.items(); // [{ variantId: "42", quantity: 2 }]
 */
export function createCart() {
  let lines = [];
  const find = (variantId) => lines.find((l) => l.variantId === variantId);
  return {
    lines: () => lines,
    has: (variantId) => Boolean(find(variantId)),
    quantity: (variantId) => find(variantId)?.quantity ?? 0,
    add(variantId, quantity = 1) {
      if (!find(variantId) && lines.length < MAX_LINES) lines = [...lines, { variantId, quantity }];
    },
    remove(variantId) {
      lines = lines.filter((l) => l.variantId !== variantId);
    },
    set(variantId, quantity) {
      lines = lines.map((l) => (l.variantId === variantId ? { ...l, quantity } : l));
    },
    clear() {
      lines = [];
    },
    units: () => lines.reduce((n, l) => n + l.quantity, 0),
    items: () => lines.map(({ variantId, quantity }) => ({ variantId, quantity })),
    get full() {
      return lines.length >= MAX_LINES;
    },
  };
}

/**
 * The most units of `variantId` this cart may hold: what the variant has left, its own limit per shopper
 * if any, and what the sale's limit leaves after the cart's other lines. At least 1.
 */
export function lineMax(sale, cart, variantId) {
  const variant = variantById(sale, variantId);
  const others = cart.units() - cart.quantity(variantId);
  const caps = [sale.perUserLimit - others];
  if (variant && variant.remaining > 0) caps.push(variant.remaining);
  if (variant?.perUserLimit) caps.push(variant.perUserLimit);
  return Math.max(1, Math.min(...caps));
}

/** The cart's total in cents, at the variants' prices. */
export function cartAmount(sale, cart) {
  return cart
    .lines()
    .reduce((sum, l) => sum + (variantById(sale, l.variantId)?.priceCents ?? 0) * l.quantity, 0);
}

/**
 * Fits the cart to the sale as it is now: lines of variants that are gone (or no longer offered) leave
 * it, the others are clamped to what they may hold. Returns the names of the variants that left.
 */
export function fitCart(sale, cart) {
  const left = [];
  for (const line of cart.lines()) {
    const variant = variantById(sale, line.variantId);
    if (!variant || isGone(variant)) {
      cart.remove(line.variantId);
      left.push(variant?.name ?? line.variantId);
    }
  }
  for (const line of cart.lines()) {
    const max = lineMax(sale, cart, line.variantId);
    if (line.quantity > max) cart.set(line.variantId, max);
  }
  return left;
}
