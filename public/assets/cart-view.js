import { lineMax } from "./cart.js";
import { byId, h, setText } from "./dom.js";
import { formatMoney } from "./format.js";
import { createQuantityStepper } from "./quantity-stepper.js";
import { variantById } from "./variants.js";

/**
 * The cart on the sale page: a list of lines, each with its own − [n] + stepper, its price and a Remove
 * button, then the total. Rows are kept while their line stays in the cart (focus and typing survive the
 * page's ticks). `onChange()` after a quantity change, `onRemove(variantId)` on Remove.
 */
export function createCartView({ onChange, onRemove }) {
  const list = byId("cart-lines");
  const rows = new Map();

  function row(sale, cart, variantId) {
    const name = variantById(sale, variantId)?.name ?? variantId;
    const input = h("input", {
      class: "qty-input num",
      type: "number",
      inputmode: "numeric",
      min: "1",
      value: String(cart.quantity(variantId)),
      "aria-label": `Quantity of ${name}`,
    });
    const dec = h("button", { type: "button", class: "step-btn", "aria-label": `One fewer of ${name}` }, "−");
    const inc = h("button", { type: "button", class: "step-btn", "aria-label": `One more of ${name}` }, "+");
    let current = { sale, cart };
    const stepper = createQuantityStepper({
      input,
      dec,
      inc,
      max: () => lineMax(current.sale, current.cart, variantId),
      onChange: () => {
        current.cart.set(variantId, stepper.value());
        onChange();
      },
    });
    const parts = {
      name: h("span", { class: "cart-name" }, name),
      price: h("span", { class: "cart-price num" }),
    };
    const li = h(
      "li",
      { class: "cart-line", "data-variant-id": variantId },
      parts.name,
      h("div", { class: "stepper stepper-small" }, dec, input, inc),
      parts.price,
      h(
        "button",
        {
          type: "button",
          class: "link-btn cart-remove",
          "aria-label": `Remove ${name} from the cart`,
          onclick: () => onRemove(variantId),
        },
        "Remove",
      ),
    );
    return { li, input, stepper, ...parts, update: (next) => (current = next) };
  }

  return {
    render(sale, cart) {
      const ids = new Set(cart.lines().map((l) => l.variantId));
      for (const [id, r] of rows) {
        if (!ids.has(id)) {
          r.li.remove();
          rows.delete(id);
        }
      }
      for (const line of cart.lines()) {
        let r = rows.get(line.variantId);
        if (!r) {
          r = row(sale, cart, line.variantId);
          rows.set(line.variantId, r);
          list.append(r.li);
        }
        r.update({ sale, cart });
        if (document.activeElement !== r.input && r.input.value !== String(line.quantity))
          r.input.value = String(line.quantity);
        r.stepper.render();
        const price = variantById(sale, line.variantId)?.priceCents ?? 0;
        setText(r.price, formatMoney(price * line.quantity));
      }
      byId("cart-empty").hidden = cart.lines().length > 0;
    },
    /** The Remove button of the line after `variantId`'s, or before it (where focus goes on a remove). */
    neighbour(variantId) {
      const keys = [...rows.keys()];
      const i = keys.indexOf(variantId);
      const next = rows.get(keys[i + 1]) ?? rows.get(keys[i - 1]);
      return next?.li.querySelector(".cart-remove") ?? null;
    },
  };
}
