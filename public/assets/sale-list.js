import { callApi } from "./api.js";
import { serverNow } from "./clock.js";
import { byId, h, setText } from "./dom.js";
import { formatInt, formatMoney } from "./format.js";
import { productArtStyle, productInitials } from "./product-art.js";
import { watchSaleList } from "./sale-list-stream.js";
import { statusBadge, whenLine } from "./sale-status.js";

const REFRESH_MS = 5000;

function card(sale) {
  const badge = statusBadge(sale.status);
  const share = sale.stock > 0 ? Math.max(0, Math.min(1, sale.remaining / sale.stock)) : 0;
  return h(
    "li",
    {},
    h(
      "a",
      {
        class: "card sale-card",
        href: `/?sale=${encodeURIComponent(sale.saleId)}`,
        "data-sale-id": sale.saleId,
      },
      h(
        "div",
        { class: "sale-card-art", style: productArtStyle(sale), "aria-hidden": "true" },
        h("span", { class: `badge ${badge.tone}` }, badge.text),
        h("span", { class: "product-initials" }, productInitials(sale.name)),
      ),
      h(
        "div",
        { class: "sale-card-body" },
        h("h2", { class: "sale-card-name" }, sale.name),
        h(
          "div",
          { class: "sale-card-row" },
          h("span", { class: "sale-card-price num" }, formatMoney(sale.priceCents)),
          h("span", { class: "sale-card-when num", "data-when": "" }, whenLine(sale, serverNow())),
        ),
        h(
          "span",
          { class: "muted num" },
          `${formatInt(sale.remaining)} of ${formatInt(sale.stock)} left · limit ${sale.perUserLimit} per customer`,
        ),
        h(
          "div",
          { class: "stock-bar", "aria-hidden": "true" },
          h("span", { style: `width:${share * 100}%` }),
        ),
      ),
    ),
  );
}

/**
 * The list of live and upcoming sales: pushed over `GET /api/sales/events` while shown (remaining and
 * status as they change), fetched every 5 s only while that stream is down, countdowns ticking on the
 * server's clock in between. Returns `{ show(), hide() }`.
 */
export function mountSaleList() {
  const list = byId("sale-list");
  const status = byId("list-status");
  let sales = [];
  let refreshTimer = null;
  let tickTimer = null;
  let stopStream = null;
  let streamUp = false;

  function render(next) {
    sales = next;
    status.hidden = true;
    list.replaceChildren(
      ...(sales.length
        ? sales.map(card)
        : [
            h(
              "li",
              { class: "empty card" },
              "No sales right now. New drops appear here as soon as they are scheduled.",
            ),
          ]),
    );
  }

  async function refresh() {
    const r = await callApi("/api/sales");
    if (r.ok) {
      if (!streamUp) render(r.data.sales);
    } else if (!sales.length) {
      status.hidden = false;
      status.textContent = "We could not load the sales. Retrying…";
    }
  }

  function tick() {
    const now = serverNow();
    list.querySelectorAll("[data-sale-id]").forEach((el, i) => {
      const sale = sales[i];
      if (sale) setText(el.querySelector("[data-when]"), whenLine(sale, now));
    });
  }

  return {
    show() {
      refresh();
      refreshTimer = setInterval(() => {
        if (!streamUp) refresh();
      }, REFRESH_MS);
      tickTimer = setInterval(tick, 1000);
      stopStream = watchSaleList({
        onList: (body) => render(body.sales),
        onState: (up) => {
          streamUp = up;
        },
      });
    },
    hide() {
      clearInterval(refreshTimer);
      clearInterval(tickTimer);
      stopStream?.();
      stopStream = null;
    },
  };
}
