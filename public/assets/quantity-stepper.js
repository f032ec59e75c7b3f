import { byId } from "./dom.js";

/**
 * The − [n] + quantity control, clamped to 1…`max()`. `onChange()` runs after every change. The page's
 * own stepper by default; a cart line passes its own `input`, `dec` and `inc` elements.
 *
 * @example
 * const qty = createQuantityStepper({ max: () => sale.perUserLimit, onChange: render });
 * qty.value(); qty.set(2); qty.render();
 */
export function createQuantityStepper({
  max,
  onChange,
  input = byId("qty-input"),
  dec = byId("qty-dec"),
  inc = byId("qty-inc"),
}) {
  function value() {
    const n = Math.round(Number(input.value));
    return Math.min(max(), Math.max(1, Number.isFinite(n) ? n : 1));
  }

  function set(n) {
    input.value = String(Math.min(max(), Math.max(1, n)));
    onChange();
  }

  dec.addEventListener("click", () => set(value() - 1));
  inc.addEventListener("click", () => set(value() + 1));
  input.addEventListener("change", () => set(value()));

  return {
    value,
    set,
    /** Re-clamps the shown value (the limit or the stock may have changed) and the buttons. */
    render() {
      const q = value();
      if (String(q) !== input.value) input.value = String(q);
      input.max = String(max());
      dec.disabled = q <= 1;
      inc.disabled = q >= max();
    },
    reset() {
      input.value = "1";
    },
  };
}
