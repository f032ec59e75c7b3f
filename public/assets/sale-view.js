import { callApi } from "./api.js";
import { serverNow } from "./clock.js";
import { byId, setText } from "./dom.js";
import { formatInt, formatMoney, formatSeconds, formatWhen } from "./format.js";
import { signOut } from "./identity.js";
import { shopperMessage } from "./messages.js";
import { createOrderFlow } from "./order-flow.js";
import { productArtStyle, productInitials } from "./product-art.js";
import { buyOnce } from "./purchase.js";
import { statusAt, statusBadge } from "./sale-status.js";
import { createTimer } from "./sale-timer.js";

const REFRESH_MS = 3000;
const OPENING_POLL_MS = 300;

/**
 * One sale's page: facts, the countdown on the server's clock, the quantity stepper and the buy button
 * (enabled only once the API says the sale is live and hands out its product token), then the order.
 * `account` is the header's account area (to open sign-in); `onSignedOut()` re-renders it.
 */
export function mountSaleView({ account, onSignedOut }) {
  const buyButton = byId("buy-button");
  const qtyInput = byId("qty-input");
  const timer = createTimer();
  let sale = null;
  let shopper = null;
  let buying = false;
  let waitUntil = 0;
  let loops = [];
  let lastFetch = 0;

  const order = createOrderFlow({
    getShopper: () => shopper,
    getSale: () => sale,
    onActiveChange: layers,
    onStatus: () => refresh(),
    say,
  });

  /** Shows a message under the active layer's button (and clears the other layer's). */
  function say(text, tone = "error") {
    const [active, other] = order.active ? ["order-message", "message"] : ["message", "order-message"];
    byId(active).dataset.tone = tone;
    setText(byId(active), text);
    setText(byId(other), "");
  }

  function layers(orderActive) {
    const buyForm = byId("buy-form");
    const panel = byId("order-panel");
    buyForm.setAttribute("aria-hidden", String(orderActive));
    buyForm.inert = orderActive;
    panel.setAttribute("aria-hidden", String(!orderActive));
    panel.inert = !orderActive;
    render();
  }

  function maxQuantity() {
    if (!sale) return 1;
    return Math.max(1, Math.min(sale.perUserLimit, sale.remaining > 0 ? sale.remaining : sale.perUserLimit));
  }

  function quantity() {
    const n = Math.round(Number(qtyInput.value));
    return Math.min(maxQuantity(), Math.max(1, Number.isFinite(n) ? n : 1));
  }

  function setQuantity(n) {
    qtyInput.value = String(Math.min(maxQuantity(), Math.max(1, n)));
    render();
  }

  function render() {
    if (!sale) return;
    const now = serverNow();
    const status = statusAt(sale, now);
    const badge = statusBadge(status === "opening" ? "live" : status);
    const badgeEl = byId("sale-badge");
    badgeEl.className = `badge ${badge.tone}`;
    setText(badgeEl, badge.text);
    setText(byId("sale-name"), sale.name);
    setText(byId("sale-price"), formatMoney(sale.priceCents));
    setText(byId("sale-limit"), `${formatInt(sale.perUserLimit)} each`);
    setText(byId("sale-remaining"), `${formatInt(sale.remaining)} of ${formatInt(sale.stock)}`);
    byId("stock-fill").style.width = `${sale.stock > 0 ? (100 * sale.remaining) / sale.stock : 0}%`;
    const q = quantity();
    if (String(q) !== qtyInput.value) qtyInput.value = String(q);
    qtyInput.max = String(maxQuantity());
    byId("qty-dec").disabled = q <= 1;
    byId("qty-inc").disabled = q >= maxQuantity();
    timer.render(sale, status, now);
    renderButton(status, now, q);
  }

  function renderButton(status, now, q) {
    const live = status === "live" && Boolean(sale.productToken);
    const waiting = now < waitUntil;
    let label = `Buy now · ${formatMoney(sale.priceCents * q)}`;
    let enabled = live && !buying && !waiting;
    if (status === "upcoming" || status === "opening") label = `Opens ${formatWhen(sale.startsAt)}`;
    else if (status === "sold_out") label = "Sold out";
    else if (status === "paused") label = "Paused";
    else if (status === "ended") label = "Sale ended";
    else if (buying) label = "Reserving…";
    else if (waiting) label = `Try again in ${Math.ceil((waitUntil - now) / 1000)} s`;
    if (!shopper && status !== "sold_out" && status !== "ended") {
      label = "Sign in to buy";
      enabled = true;
    }
    buyButton.disabled = !enabled;
    buyButton.setAttribute("aria-busy", String(buying));
    setText(byId("buy-label"), label);
    const hold = formatSeconds(sale.paymentWindowSeconds ?? 600);
    setText(byId("buy-note"), `Reserved for ${hold} while you pay. Limit ${sale.perUserLimit} per customer.`);
  }

  async function refresh() {
    if (!sale) return;
    lastFetch = Date.now();
    const r = await callApi(`/api/sales/${encodeURIComponent(sale.saleId)}`);
    if (r.ok && sale && r.data.saleId === sale.saleId) {
      const wasLive = sale.status === "live";
      sale = r.data;
      if (!wasLive && sale.status === "live")
        setText(byId("timer-announce"), "The sale is open. You can buy now.");
      render();
    }
  }

  function tick() {
    if (!sale) return;
    const now = serverNow();
    const status = statusAt(sale, now);
    const due = status === "opening" || (status === "ended" && sale.status !== "ended");
    if ((due && Date.now() - lastFetch >= OPENING_POLL_MS) || Date.now() - lastFetch >= REFRESH_MS) refresh();
    render();
    order.tick();
  }

  async function buy(event) {
    event.preventDefault();
    if (!shopper) return account.open();
    if (!sale?.productToken || buying) return;
    buying = true;
    say("");
    render();
    const r = await buyOnce({
      productToken: sale.productToken,
      quantity: quantity(),
      token: shopper.token,
      onRetry: (res, ms) => say(shopperMessage(res.error, { retryAfter: ms / 1000 }), "info"),
    });
    buying = false;
    if (r.ok) {
      say("");
      order.start(r.data, shopper);
    } else {
      failed(r);
    }
    render();
    refresh();
  }

  function failed(r) {
    const code = r.error.code;
    say(shopperMessage(r.error, { retryAfter: r.retryAfter, perUserLimit: sale.perUserLimit }));
    if (code === "RATE_LIMITED" || code === "UNAVAILABLE")
      waitUntil = serverNow() + (r.retryAfter ?? 2) * 1000;
    if (code === "INSUFFICIENT_STOCK" && r.error.remaining > 0) setQuantity(r.error.remaining);
    if (code === "LIMIT_EXCEEDED" && r.error.mayStillBuy > 0) setQuantity(r.error.mayStillBuy);
    if (code === "UNAUTHENTICATED") {
      signOut();
      shopper = null;
      onSignedOut();
      account.open();
    }
  }

  byId("buy-form").addEventListener("submit", buy);
  byId("qty-dec").addEventListener("click", () => setQuantity(quantity() - 1));
  byId("qty-inc").addEventListener("click", () => setQuantity(quantity() + 1));
  qtyInput.addEventListener("change", () => setQuantity(quantity()));

  return {
    /** Shows a sale: `initial` is a Sale from the API (or null to fetch it). */
    async show(saleId, currentShopper) {
      shopper = currentShopper;
      say("");
      const r = await callApi(`/api/sales/${encodeURIComponent(saleId)}`);
      if (!r.ok) {
        sale = null;
        setText(
          byId("sale-name"),
          r.error.code === "UNKNOWN_SALE" ? "Sale not found" : "Could not load this sale",
        );
        say(shopperMessage(r.error));
        return;
      }
      sale = r.data;
      lastFetch = Date.now();
      const art = byId("product-art");
      art.setAttribute("style", productArtStyle(sale));
      setText(byId("product-initials"), productInitials(sale.name));
      document.title = `${sale.name} · Drop`;
      qtyInput.value = "1";
      order.restore(shopper);
      render();
      loops = [setInterval(tick, 250)];
    },
    hide() {
      loops.forEach(clearInterval);
      loops = [];
      order.detach();
      sale = null;
    },
    setShopper(next) {
      if (shopper?.userId !== next?.userId) order.detach();
      shopper = next;
      if (sale && shopper) order.restore(shopper);
      render();
    },
  };
}
