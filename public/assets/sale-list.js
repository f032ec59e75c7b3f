import { callApi } from "./api.js";
import { serverNow } from "./clock.js";
import { byId, h, setText } from "./dom.js";
import { formatInt, formatMoney } from "./format.js";
import { productArtStyle, productImageUrl, productInitials } from "./product-art.js";
import { watchSaleList } from "./sale-list-stream.js";
import { statusBadge, whenLine } from "./sale-status.js";
import { hasChoice, isGone, priceLine, variantsOf } from "./variants.js";

const REFRESH_MS = 5000;
const MAX_CHIPS = 8;

/** The card's artwork: the sale's image when it has one (the monogram while it loads or if it fails). */
function art(sale) {
  const url = productImageUrl(sale);
  const initials = h("span", { class: "product-initials" }, productInitials(sale.name));
  if (!url) return [initials];
  const img = h("img", { class: "product-image", src: url, alt: "", loading: "lazy" });
  img.addEventListener("load", () => {
    initials.hidden = true;
  });
  img.addEventListener("error", () => {
    img.hidden = true;
  });
  return [initials, img];
}

/** A sale of several variants: its options as chips, those that are gone greyed and said so. */
function chips(sale) {
  if (!hasChoice(sale)) return null;
  const variants = variantsOf(sale);
  const shown = variants.slice(0, MAX_CHIPS);
  return h(
    "ul",
    { class: "variant-chips", "aria-label": "Options" },
    ...shown.map((v) =>
      h(
        "li",
        {
          class: "variant-chip",
          "data-variant-id": v.variantId,
          "data-state": isGone(v) ? "sold_out" : "available",
        },
        v.name,
        isGone(v) ? h("span", { class: "visually-hidden" }, " (sold out)") : null,
      ),
    ),
    variants.length > shown.length
      ? h("li", { class: "variant-chip more" }, `+${variants.length - shown.length}`)
      : null,
  );
}

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
        ...art(sale),
      ),
      h(
        "div",
        { class: "sale-card-body" },
        h("h2", { class: "sale-card-name" }, sale.name),
        h(
          "div",
          { class: "sale-card-row" },
          h(
            "span",
            { class: "sale-card-price num" },
            hasChoice(sale) ? priceLine(sale) : formatMoney(sale.priceCents),
          ),
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
        chips(sale),
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
