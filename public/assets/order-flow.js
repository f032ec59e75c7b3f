import { serverNow } from "./clock.js";
import { byId, h, setText } from "./dom.js";
import { formatCountdown, formatMoney, formatWhen } from "./format.js";
import { icons } from "./icons.js";
import { shopperMessage } from "./messages.js";
import { trackOrder } from "./order-tracker.js";
import { cancelOrder, openCheckout, payOrder } from "./purchase.js";
import { hasChoice } from "./variants.js";

const FINAL = new Set(["paid", "expired", "cancelled"]);
const storageKey = (userId, saleId) => `flashsale.order.${userId}.${saleId}`;

/** What the order costs: its `amountCents`, else (a body from before carts) the sale's price per unit. */
export const orderAmount = (order, sale) => order.amountCents ?? sale.priceCents * order.quantity;

/** The order's lines worth listing: those of a cart (a sale of several variants), else none. */
function linesOf(order, sale) {
  const items = Array.isArray(order.items) ? order.items : [];
  return hasChoice(sale) || items.length > 1 ? items : [];
}

/**
 * The shopper's current order for the sale on screen: tracks it (polling), renders its state, and
 * runs pay and cancel. The order id is remembered per user and sale, so a reload picks it up again.
 * `hooks`: `getShopper()`, `getSale()`, `onActiveChange(active)`, `onStatus(status)`, `say(text, tone)`.
 */
export function createOrderFlow(hooks) {
  const panel = byId("order-panel");
  const payButton = byId("pay-button");
  const cancelButton = byId("cancel-button");
  const againButton = byId("again-button");
  let order = null;
  let tracker = null;
  let busy = false;
  let deadlineHtml = null;
  let linesShown = "";

  function show(next) {
    // a state without the lines (a read before the order was written) keeps those the buy knew
    if (next && order?.orderId === next.orderId && !next.items && order.items)
      next = { ...next, items: order.items, amountCents: next.amountCents ?? order.amountCents };
    const wasActive = order !== null;
    const changed = next && next.status !== order?.status;
    order = next;
    if (order) render();
    if (changed) hooks.onStatus(order.status);
    if (wasActive !== (order !== null)) hooks.onActiveChange(order !== null);
  }

  function follow(orderId, shopper, first) {
    tracker?.stop();
    localStorage.setItem(storageKey(shopper.userId, hooks.getSale().saleId), orderId);
    if (first) show(first);
    tracker = trackOrder(orderId, shopper.token, {
      onChange: (o) => show(o),
      onError: (r) => {
        if (r.error.code === "UNKNOWN_ORDER") clear();
        else hooks.say(shopperMessage(r.error));
      },
    });
  }

  function clear() {
    tracker?.stop();
    tracker = null;
    const shopper = hooks.getShopper();
    const sale = hooks.getSale();
    if (shopper && sale) localStorage.removeItem(storageKey(shopper.userId, sale.saleId));
    show(null);
  }

  function steps(done, current) {
    ["reserved", "confirmed", "paid"].forEach((name, i) => {
      const li = byId(`step-${name}`);
      li.toggleAttribute("data-done", i < done);
      li.toggleAttribute("data-current", i === current);
    });
  }

  function render() {
    const sale = hooks.getSale();
    const now = serverNow();
    const lines = linesOf(order, sale);
    const what = lines.length
      ? `${sale.name}: ${lines.map((l) => `${l.name} × ${l.quantity}`).join(", ")}`
      : `${order.quantity} × ${sale.name}`;
    const amount = orderAmount(order, sale);
    const late = order.status === "awaiting_payment" && Date.parse(order.expiresAt) <= now;
    panel.dataset.status = order.status;
    const view = {
      queued: [icons.spinner, "Reserved, confirming your order", `${what}. Hold tight, this takes a moment.`],
      awaiting_payment: late
        ? [icons.clock, "Time is up", "The time to pay has run out. Releasing your reservation…"]
        : [icons.clock, "Reserved for you", `${what}. Pay before the timer runs out to keep it.`],
      paid: [icons.check, "Paid. It's yours!", `${what} · paid ${formatWhen(order.paidAt ?? now)}.`],
      expired: [icons.cross, "Expired", shopperMessage({ code: "ORDER_EXPIRED" })],
      cancelled: [icons.cross, "Cancelled", "Your order was cancelled and the units went back on sale."],
    }[order.status];
    byId("order-icon").innerHTML = view[0];
    setText(byId("order-title"), view[1]);
    setText(byId("order-detail"), view[2]);
    steps(
      { queued: 1, awaiting_payment: 2, paid: 3, expired: 2, cancelled: 1 }[order.status],
      { queued: 1, awaiting_payment: 2 }[order.status] ?? -1,
    );
    setText(byId("receipt-order"), order.orderId.slice(-8).toUpperCase());
    setText(byId("receipt-qty"), String(order.quantity));
    setText(byId("receipt-total"), formatMoney(amount));
    renderLines(lines);
    const open = order.status === "queued" || order.status === "awaiting_payment";
    payButton.hidden = !open;
    payButton.disabled = busy || order.status !== "awaiting_payment" || late;
    payButton.textContent = busy ? "Paying…" : `Pay ${formatMoney(amount)}`;
    cancelButton.hidden = !open;
    cancelButton.disabled = busy;
    againButton.hidden = open;
    againButton.textContent = order.status === "paid" ? "Done" : "Back to the sale";
    deadlineHtml = null;
    tick();
  }

  /** The receipt's lines (a cart's order): name, units × price, line total; hidden for a single product. */
  function renderLines(lines) {
    const key = JSON.stringify(lines);
    if (key === linesShown) return;
    linesShown = key;
    const list = byId("receipt-lines");
    list.hidden = lines.length === 0;
    list.replaceChildren(
      ...lines.map((l) =>
        h(
          "li",
          { "data-variant-id": l.variantId },
          h("span", { class: "receipt-line-name" }, l.name),
          " ",
          h("span", { class: "receipt-line-qty num" }, `${l.quantity} × ${formatMoney(l.priceCents)}`),
          " ",
          h("span", { class: "receipt-line-total num" }, formatMoney(l.priceCents * l.quantity)),
        ),
      ),
    );
  }

  function tick() {
    if (!order) return;
    const left = Date.parse(order.expiresAt) - serverNow();
    let html = "&nbsp;";
    if (order.status === "awaiting_payment" || order.status === "queued") {
      const label = order.status === "queued" ? "Held for" : "Time left to pay";
      html = `${label} <strong>${formatCountdown(left, "down")}</strong>`;
      if (left <= 0 && order.status === "awaiting_payment" && !payButton.disabled) render();
    } else if (order.status === "paid") {
      html = "Paid. A receipt is on its way.";
    }
    if (html !== deadlineHtml) {
      deadlineHtml = html;
      byId("deadline").innerHTML = html;
    }
  }

  payButton.addEventListener("click", async () => {
    const shopper = hooks.getShopper();
    if (!order || !shopper || busy) return;
    busy = true;
    render();
    hooks.say("");
    const onRetry = (res, ms) => hooks.say(shopperMessage(res.error, { retryAfter: ms / 1000 }), "info");
    // a payment provider decides "paid": the shopper pays on its checkout page, which sends them back here
    const checkout = await openCheckout(order.orderId, shopper.token, onRetry);
    if (checkout.ok && checkout.data.provider === "stripe") {
      location.assign(checkout.data.url);
      return;
    }
    if (checkout.ok && checkout.data.provider === "manual") {
      busy = false;
      hooks.say("The shop confirms your payment; this page shows it as soon as it does.", "info");
      render();
      return;
    }
    const r = checkout.ok
      ? await payOrder(order.orderId, shopper.token, onRetry)
      : { ok: false, error: checkout.error, retryAfter: checkout.retryAfter };
    busy = false;
    if (r.ok) show(r.data);
    else {
      hooks.say(shopperMessage(r.error, { retryAfter: r.retryAfter }));
      render();
      tracker?.refresh();
    }
  });

  cancelButton.addEventListener("click", async () => {
    const shopper = hooks.getShopper();
    if (!order || !shopper || busy) return;
    busy = true;
    render();
    const r = await cancelOrder(order.orderId, shopper.token);
    busy = false;
    if (r.ok) show(r.data);
    else {
      hooks.say(shopperMessage(r.error, { retryAfter: r.retryAfter }));
      render();
      tracker?.refresh();
    }
  });

  againButton.addEventListener("click", () => {
    hooks.say("");
    clear();
  });

  return {
    /**
     * A 202 from the buy route: show "queued" at once and start following it. A cart's buy passes its
     * `lines` (`{ variantId, name, quantity, priceCents }`), shown until the order itself lists them.
     */
    start(accepted, shopper, lines = null) {
      const now = new Date(serverNow()).toISOString();
      const first = { ...accepted, saleId: hooks.getSale().saleId, createdAt: now };
      if (lines && !first.items) first.items = lines;
      if (lines && first.amountCents === undefined)
        first.amountCents = lines.reduce((sum, l) => sum + l.priceCents * l.quantity, 0);
      follow(accepted.orderId, shopper, first);
    },
    /** Picks up the order this shopper left open on this sale (after a reload). */
    restore(shopper) {
      const id = shopper && localStorage.getItem(storageKey(shopper.userId, hooks.getSale().saleId));
      if (id) follow(id, shopper, null);
    },
    /** Stops tracking without forgetting the order (leaving the page, signing out). */
    detach() {
      tracker?.stop();
      tracker = null;
      show(null);
    },
    tick,
    get active() {
      return order !== null;
    },
    get status() {
      return order?.status ?? null;
    },
    isFinal: () => order !== null && FINAL.has(order.status),
  };
}
