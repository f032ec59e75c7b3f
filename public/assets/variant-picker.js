import { byId, h, setText } from "./dom.js";
import { formatMoney } from "./format.js";
import { isGone, stockLabel, variantsOf } from "./variants.js";

/**
 * The sale page's variant picker (sizes, styles): one toggle button per variant, pressed while it is in
 * the cart, showing what it has left. A variant that is gone is a disabled button that says "Sold out".
 * Prices show on the buttons only when the variants' prices differ. `onToggle(variantId)` on a press.
 *
 * @example
 * const picker = createVariantPicker({ onToggle: (id) => (cart.has(id) ? cart.remove(id) : cart.add(id)) });
 * picker.render(sale, cart);
 */
export function createVariantPicker({ onToggle }) {
  const box = byId("variant-options");
  const buttons = new Map();
  let shown = "";

  function build(variants) {
    buttons.clear();
    box.replaceChildren(
      ...variants.map((v) => {
        const parts = {
          name: h("span", { class: "variant-name" }),
          price: h("span", { class: "variant-price num" }),
          stock: h("span", { class: "variant-stock num" }),
        };
        const button = h(
          "button",
          {
            type: "button",
            class: "variant",
            "data-variant-id": v.variantId,
            "aria-pressed": "false",
            onclick: () => onToggle(v.variantId),
          },
          parts.name,
          " ",
          parts.price,
          " ",
          parts.stock,
        );
        buttons.set(v.variantId, { button, ...parts });
        return button;
      }),
    );
  }

  return {
    render(sale, cart) {
      const variants = variantsOf(sale);
      const key = variants.map((v) => v.variantId).join("\n");
      if (key !== shown) {
        shown = key;
        build(variants);
      }
      const priced = new Set(variants.map((v) => v.priceCents)).size > 1;
      for (const v of variants) {
        const parts = buttons.get(v.variantId);
        if (!parts) continue;
        const gone = isGone(v);
        parts.button.disabled = gone;
        parts.button.dataset.state = gone ? "sold_out" : "available";
        parts.button.setAttribute("aria-pressed", String(!gone && cart.has(v.variantId)));
        setText(parts.name, v.name);
        setText(parts.price, priced ? formatMoney(v.priceCents) : "");
        parts.price.hidden = !priced;
        setText(parts.stock, stockLabel(v));
      }
    },
    /** The button of a variant (to move focus back to it). */
    button: (variantId) => buttons.get(variantId)?.button ?? null,
  };
}
