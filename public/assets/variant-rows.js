import { byId, h } from "./dom.js";

/** A variant row's inputs: the key in the body, its label, and the input's attributes. */
const INPUTS = [
  { key: "variantId", label: "Id", attrs: { spellcheck: "false", maxlength: "32", placeholder: "42" } },
  { key: "name", label: "Name", attrs: { placeholder: "Size 42" } },
  {
    key: "priceCents",
    label: "Price (USD)",
    attrs: { type: "number", min: "0", step: "0.01", inputmode: "decimal" },
  },
  { key: "stock", label: "Stock", attrs: { type: "number", min: "0", step: "1" } },
  { key: "perUserLimit", label: "Limit", attrs: { type: "number", min: "1", step: "1", placeholder: "–" } },
  { key: "description", label: "Description", more: true, attrs: { maxlength: "2000" } },
  { key: "imageUrl", label: "Image URL", more: true, attrs: { spellcheck: "false" } },
];

/**
 * The create form's variant rows: one per variant (id, name, price, stock, optional limit, and behind
 * "More" a description and an image URL), each with a Remove button. A new row starts from the row
 * before it (or from the sale's price and stock) with the next id when that one is a number, so a run of
 * sizes is quick to enter. `onChange(count)` after a row is added or removed.
 *
 * @example
 * const rows = mountVariantRows({ start: () => ({ priceCents: "129", stock: "10" }), onChange });
 * rows.values(); // [{ variantId: "42", name: "42", priceCents: "129", stock: "10", perUserLimit: "" , … }]
 */
export function mountVariantRows({ start, onChange }) {
  const list = byId("variant-rows");
  let made = 0;

  const rows = () => [...list.querySelectorAll(":scope > li")];
  const input = (row, key) => row.querySelector(`[data-key="${key}"]`);

  function renumber() {
    rows().forEach((row, i) => {
      row.dataset.row = String(i);
      row.querySelector(".variant-row-title").textContent = `Variant ${i + 1}`;
      row.querySelector(".variant-remove").setAttribute("aria-label", `Remove variant ${i + 1}`);
    });
  }

  function field(uid, { key, label, attrs }, value) {
    const id = `v${uid}-${key}`;
    return h(
      "div",
      { class: `field variant-field-${key}` },
      h("label", { for: id }, label),
      h("input", { id, class: "input", "data-key": key, value: value ?? "", ...attrs }),
    );
  }

  function add() {
    const uid = ++made;
    const previous = rows().at(-1);
    const from = previous
      ? Object.fromEntries(INPUTS.map(({ key }) => [key, input(previous, key).value]))
      : start();
    const next = /^\d+$/.test(from.variantId ?? "") ? String(Number(from.variantId) + 1) : "";
    const seed = { ...from, variantId: next, name: next, description: "", imageUrl: "" };
    const remove = h("button", { class: "link-btn small variant-remove", type: "button" }, "Remove");
    const row = h(
      "li",
      { class: "variant-row" },
      h("div", { class: "variant-row-head" }, h("span", { class: "variant-row-title" }), remove),
      h(
        "div",
        { class: "variant-row-grid" },
        INPUTS.filter((i) => !i.more).map((i) => field(uid, i, seed[i.key])),
      ),
      h(
        "details",
        { class: "variant-more" },
        h("summary", {}, "Description and image"),
        INPUTS.filter((i) => i.more).map((i) => field(uid, i, "")),
      ),
      h("p", { class: "field-error variant-error" }),
    );
    remove.addEventListener("click", () => {
      const after = row.nextElementSibling ?? row.previousElementSibling;
      row.remove();
      renumber();
      onChange(rows().length);
      (after?.querySelector("input") ?? byId("add-variant")).focus();
    });
    list.append(row);
    renumber();
    onChange(rows().length);
    input(row, "variantId").focus();
  }

  byId("add-variant").addEventListener("click", add);

  return {
    count: () => rows().length,
    /** Each row's inputs as typed (strings), in order. */
    values: () =>
      rows().map((row) => Object.fromEntries(INPUTS.map(({ key }) => [key, input(row, key).value.trim()]))),
    clear() {
      list.replaceChildren();
      onChange(0);
    },
    /**
     * Shows the 400's `variants.<i>.<field>` messages on their rows and inputs (`friendly(field, message)`
     * words them); returns the first input in error, or null.
     */
    showErrors(fields, friendly) {
      let first = null;
      rows().forEach((row, i) => {
        const messages = [];
        for (const { key, label } of INPUTS) {
          const message = fields[`variants.${i}.${key}`];
          const el = input(row, key);
          el.setAttribute("aria-invalid", String(Boolean(message)));
          if (!message) continue;
          messages.push(`${label}: ${friendly(key, message)}`);
          first ??= el;
          if (key === "description" || key === "imageUrl") row.querySelector("details").open = true;
        }
        const general = fields[`variants.${i}`];
        if (general) messages.unshift(general);
        row.querySelector(".variant-error").textContent = messages.join(" ");
      });
      return first;
    },
  };
}
