import { callApi } from "./api.js";
import { buyButtonState } from "./buy-button.js";
import { createCartPanel } from "./cart-panel.js";
import { serverNow } from "./clock.js";
import { byId, setText } from "./dom.js";
import { formatSeconds } from "./format.js";
import { signOut } from "./identity.js";
import { shopperMessage } from "./messages.js";
import { createOrderFlow } from "./order-flow.js";
import { buyOnce } from "./purchase.js";
import { createQuantityStepper } from "./quantity-stepper.js";
import { createQueuePanel } from "./queue-panel.js";
import { renderSaleArt, renderSaleFacts, renderSaleIdentity } from "./sale-facts.js";
import { statusAt } from "./sale-status.js";
import { watchSale } from "./sale-stream.js";
import { createTimer } from "./sale-timer.js";
import { sayOnStage, showOrderLayer } from "./stage.js";
import { hasChoice, variantById } from "./variants.js";

const REFRESH_MS = 3000;
const OPENING_POLL_MS = 300;

/**
 * One sale's page: facts, the countdown on the server's clock, the quantity stepper (or, for a sale of
 * several variants, the picker and the cart) and the buy button (enabled only once the API says the sale
 * is live and hands out its product token), then the order.
 * The sale's state is pushed (sale-stream.js); the page polls only while that stream is down.
 * `account` is the header's account area (to open sign-in); `onSignedOut()` re-renders it.
 */
export function mountSaleView({ account, onSignedOut }) {
  const buyButton = byId("buy-button");
  const timer = createTimer();
  let sale = null;
  let shopper = null;
  let buying = false;
  let waitUntil = 0;
  let loops = [];
  let lastFetch = 0;
  let streamUp = false;
  let stopStream = null;

  const order = createOrderFlow({
    getShopper: () => shopper,
    getSale: () => sale,
    onActiveChange: (active) => {
      showOrderLayer(active);
      render();
    },
    onStatus: () => refresh(),
    say,
  });

  const room = createQueuePanel({ onChange: () => render() });

  const qty = createQuantityStepper({
    max: () =>
      sale
        ? Math.max(1, Math.min(sale.perUserLimit, sale.remaining > 0 ? sale.remaining : sale.perUserLimit))
        : 1,
    onChange: () => render(),
  });

  const cart = createCartPanel({ onChange: () => render(), say });

  /** The variant names a cart's error messages use (null on a sale of one). */
  const variantName = () => (sale && hasChoice(sale) ? (id) => variantById(sale, id)?.name ?? id : null);

  function say(text, tone = "error") {
    sayOnStage(order.active, text, tone);
  }

  function render() {
    if (!sale) return;
    const now = serverNow();
    const status = statusAt(sale, now);
    renderSaleFacts(sale, status);
    if (hasChoice(sale)) cart.render();
    else qty.render();
    renderSaleArt(sale, cart.focused());
    timer.render(sale, status, now);
    renderButton(status, now);
  }

  function renderButton(status, now) {
    const choice = hasChoice(sale);
    const state = buyButtonState({
      sale,
      status,
      signedIn: Boolean(shopper),
      buying,
      waitMs: waitUntil - now,
      quantity: choice ? cart.units() : qty.value(),
      amountCents: choice ? cart.amount() : undefined,
    });
    if (shopper && room.gated() && !room.admission() && status === "live") {
      state.enabled = false;
      state.label = "Wait for your turn in the queue";
    }
    buyButton.disabled = !state.enabled;
    buyButton.setAttribute("aria-busy", String(buying));
    setText(byId("buy-label"), state.label);
    const hold = formatSeconds(sale.paymentWindowSeconds ?? 600);
    setText(byId("buy-note"), `Reserved for ${hold} while you pay. Limit ${sale.perUserLimit} per customer.`);
  }

  function apply(next) {
    if (!sale || next.saleId !== sale.saleId) return;
    const wasLive = sale.status === "live";
    sale = next;
    cart.update(sale);
    if (!wasLive && sale.status === "live")
      setText(byId("timer-announce"), "The sale is open. You can buy now.");
    render();
  }

  async function refresh() {
    if (!sale || streamUp) return;
    lastFetch = Date.now();
    const r = await callApi(`/api/sales/${encodeURIComponent(sale.saleId)}`);
    if (r.ok) apply(r.data);
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
    const lines = hasChoice(sale)
      ? cart.items().map((item) => {
          const variant = variantById(sale, item.variantId);
          return { ...item, name: variant?.name ?? item.variantId, priceCents: variant?.priceCents ?? 0 };
        })
      : null;
    if (lines?.length === 0) return;
    buying = true;
    say("");
    render();
    const r = await buyOnce({
      productToken: sale.productToken,
      quantity: qty.value(),
      items: lines?.map(({ variantId, quantity }) => ({ variantId, quantity })),
      token: shopper.token,
      admission: room.admission(),
      onRetry: (res, ms) => say(shopperMessage(res.error, { retryAfter: ms / 1000 }), "info"),
    });
    buying = false;
    if (r.ok) {
      say("");
      order.start(r.data, shopper, lines);
      if (lines) cart.clear();
    } else {
      failed(r);
    }
    render();
    refresh();
  }

  function failed(r) {
    const code = r.error.code;
    const named = variantName();
    say(
      shopperMessage(r.error, {
        retryAfter: r.retryAfter,
        perUserLimit: sale.perUserLimit,
        variantName: named,
      }),
    );
    if (code === "RATE_LIMITED" || code === "UNAVAILABLE")
      waitUntil = serverNow() + (r.retryAfter ?? 2) * 1000;
    if (code === "INSUFFICIENT_STOCK" && named && Array.isArray(r.error.variants))
      cart.lowerTo(r.error.variants);
    else if (code === "INSUFFICIENT_STOCK" && r.error.remaining > 0) qty.set(r.error.remaining);
    if (code === "LIMIT_EXCEEDED" && !named && r.error.mayStillBuy > 0) qty.set(r.error.mayStillBuy);
    if (code === "UNAUTHENTICATED") {
      signOut();
      shopper = null;
      onSignedOut();
      account.open();
    }
  }

  byId("buy-form").addEventListener("submit", buy);

  return {
    /** Shows the sale `saleId` (fetched) for `currentShopper` (or null when signed out). */
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
      renderSaleIdentity(sale);
      qty.reset();
      cart.show(sale);
      order.restore(shopper);
      room.show(sale, shopper);
      render();
      loops = [setInterval(tick, 250)];
      stopStream = watchSale(saleId, {
        onSale: (next) => {
          lastFetch = Date.now();
          apply(next);
        },
        onState: (up) => {
          streamUp = up;
        },
      });
    },
    hide() {
      loops.forEach(clearInterval);
      loops = [];
      stopStream?.();
      stopStream = null;
      order.detach();
      room.stop();
      sale = null;
    },
    setShopper(next) {
      if (shopper?.userId !== next?.userId) order.detach();
      shopper = next;
      if (sale && shopper) order.restore(shopper);
      if (sale) room.show(sale, shopper);
      render();
    },
  };
}
