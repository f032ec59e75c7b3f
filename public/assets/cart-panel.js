import { cartAmount, createCart, fitCart, MAX_LINES } from "./cart.js";
import { createCartView } from "./cart-view.js";
import { byId, setText } from "./dom.js";
import { formatMoney } from "./format.js";
import { listOf } from "./messages.js";
import { createVariantPicker } from "./variant-picker.js";
import { hasChoice, isGone, variantById } from "./variants.js";

/**
 * The picker and the cart of a sale of several variants, in the buy form (a sale of one keeps its single
 * quantity stepper, and this stays hidden). A press on a variant puts it in the cart or takes it out; a
 * variant that sells out leaves the cart with a word to the shopper. `onChange()` after every change,
 * `say(text, tone)` for the page's message area.
 */
export function createCartPanel({ onChange, say }) {
  const cart = createCart();
  let sale = null;
  let focused = null;

  const announce = (text) => setText(byId("cart-status"), text);
  const units = (n) => `${n} ${n === 1 ? "unit" : "units"}`;

  function changed() {
    render();
    onChange();
  }

  function remove(variantId, fromCart) {
    const name = variantById(sale, variantId)?.name ?? variantId;
    const next = fromCart ? (view.neighbour(variantId) ?? picker.button(variantId)) : null;
    cart.remove(variantId);
    if (focused === variantId) focused = cart.lines().at(-1)?.variantId ?? null;
    announce(`${name} removed from the cart.`);
    changed();
    if (next && !next.disabled) next.focus();
    else if (fromCart) byId("buy-button").focus();
  }

  function toggle(variantId) {
    const variant = variantById(sale, variantId);
    if (!variant || isGone(variant)) return;
    if (cart.has(variantId)) return remove(variantId, false);
    if (cart.full) return say(`One order holds at most ${MAX_LINES} options. Remove one to add another.`);
    if (cart.units() >= sale.perUserLimit)
      return say(
        `Your cart already holds the limit of ${units(sale.perUserLimit)}. Remove one to pick another option.`,
      );
    cart.add(variantId);
    focused = variantId;
    say("");
    announce(`${variant.name} added to the cart.`);
    changed();
  }

  const picker = createVariantPicker({ onToggle: toggle });
  const view = createCartView({ onChange: changed, onRemove: (id) => remove(id, true) });

  function render() {
    if (!hasChoice(sale)) return;
    const left = fitCart(sale, cart);
    if (left.length) {
      say(`${listOf(left)} just sold out and left your cart.`, "info");
      announce(`${listOf(left)} left the cart: sold out.`);
      if (!cart.has(focused)) focused = cart.lines().at(-1)?.variantId ?? null;
    }
    picker.render(sale, cart);
    view.render(sale, cart);
    const n = cart.units();
    setText(byId("cart-total"), n ? `${units(n)} · ${formatMoney(cartAmount(sale, cart))}` : "");
    const variant = focused ? variantById(sale, focused) : null;
    const note = byId("variant-note");
    setText(note, variant?.description ? `${variant.name}: ${variant.description}` : "");
    note.hidden = !variant?.description;
  }

  return {
    /** A new sale on the page: an empty cart; the picker only for a sale of several variants. */
    show(next) {
      sale = next;
      cart.clear();
      focused = null;
      const choice = hasChoice(sale);
      byId("variant-picker").hidden = !choice;
      byId("cart").hidden = !choice;
      byId("qty").hidden = choice;
      render();
    },
    /** The sale's latest state (pushed or polled). */
    update(next) {
      sale = next;
    },
    render,
    /** The buy's lines, `{ variantId, quantity }`. */
    items: () => cart.items(),
    units: () => cart.units(),
    amount: () => cartAmount(sale, cart),
    /** The last variant picked that is still in the cart (its image and description show). */
    focused: () => (focused ? variantById(sale, focused) : null),
    /** After a buy: the cart was bought. */
    clear() {
      cart.clear();
      focused = null;
      render();
    },
    /** An INSUFFICIENT_STOCK answer's short lines `[{ variantId, remaining }]`: lowered to what is left. */
    lowerTo(shortages) {
      for (const { variantId, remaining } of shortages) {
        if (remaining > 0) cart.set(variantId, Math.min(cart.quantity(variantId), remaining));
        else cart.remove(variantId);
      }
      render();
    },
  };
}
