import { byId, setText } from "./dom.js";
import { formatInt, formatMoney } from "./format.js";
import { productArtStyle, productImageUrl, productInitials, showProductImage } from "./product-art.js";
import { statusBadge } from "./sale-status.js";
import { hasChoice, priceLine } from "./variants.js";

/** The sale page's artwork and title (once per sale). */
export function renderSaleIdentity(sale) {
  byId("product-art").style.cssText = productArtStyle(sale);
  setText(byId("product-initials"), productInitials(sale.name));
  document.title = `${sale.name} · Drop`;
  const description = byId("sale-description");
  setText(description, sale.description ?? "");
  description.hidden = !sale.description;
}

/** The artwork: the picked `variant`'s image, else the sale's, else the monogram. */
export function renderSaleArt(sale, variant) {
  showProductImage(byId("product-image"), byId("product-initials"), productImageUrl(sale, variant));
}

/** The sale page's badge, name, price, limit and remaining stock (on every tick; unchanged text stays put). */
export function renderSaleFacts(sale, status) {
  const badge = statusBadge(status === "opening" ? "live" : status);
  const badgeEl = byId("sale-badge");
  badgeEl.className = `badge ${badge.tone}`;
  setText(badgeEl, badge.text);
  setText(byId("sale-name"), sale.name);
  setText(byId("sale-price"), hasChoice(sale) ? priceLine(sale) : formatMoney(sale.priceCents));
  setText(byId("sale-limit"), `${formatInt(sale.perUserLimit)} each`);
  setText(byId("sale-remaining"), `${formatInt(sale.remaining)} of ${formatInt(sale.stock)}`);
  byId("stock-fill").style.width = `${sale.stock > 0 ? (100 * sale.remaining) / sale.stock : 0}%`;
}
