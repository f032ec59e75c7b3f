import { byId, h } from "./dom.js";
import { formatInt, formatWhen } from "./format.js";
import { statusBadge } from "./sale-status.js";
import { hasChoice } from "./variants.js";

/** The operator's list of sales; `onSelect(sale)` when one is picked. */
export function mountSalesPanel({ onSelect }) {
  const list = byId("sales-list");
  let selected = null;

  function render(sales) {
    if (!sales.length) {
      list.replaceChildren(h("li", { class: "muted" }, "No sales yet. Create the first one below."));
      return;
    }
    const ordered = [...sales].sort((a, b) => Date.parse(b.startsAt) - Date.parse(a.startsAt));
    list.replaceChildren(
      ...ordered.map((sale) => {
        const badge = statusBadge(sale.status);
        return h(
          "li",
          {},
          h(
            "button",
            {
              class: "sale-row",
              type: "button",
              "data-sale-id": sale.saleId,
              "aria-current": String(sale.saleId === selected),
              onclick: () => {
                selected = sale.saleId;
                render(sales);
                onSelect(sale);
              },
            },
            h("span", { class: "sale-row-name" }, sale.name),
            h("span", { class: `badge ${badge.tone}` }, badge.text),
            h(
              "span",
              { class: "sale-row-meta num" },
              `${formatInt(sale.remaining)} / ${formatInt(sale.stock)} left${hasChoice(sale) ? ` in ${sale.variants.length} variants` : ""} · starts ${formatWhen(sale.startsAt)}`,
            ),
          ),
        );
      }),
    );
  }

  return {
    render,
    select(saleId) {
      selected = saleId;
    },
  };
}
