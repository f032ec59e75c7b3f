import { byId } from "./dom.js";

/**
 * The purchase card's two layers, stacked in one grid cell so the card never changes height: the buy
 * form and the order panel. The hidden one is inert (no focus, not read out); focus follows the switch
 * (also when it was lost, e.g. the buy button was disabled while it held focus).
 */
export function showOrderLayer(orderActive) {
  const buyForm = byId("buy-form");
  const panel = byId("order-panel");
  const lost = !document.activeElement || document.activeElement === document.body;
  const moveFocus = lost || (orderActive ? buyForm : panel).contains(document.activeElement);
  buyForm.setAttribute("aria-hidden", String(orderActive));
  buyForm.inert = orderActive;
  panel.setAttribute("aria-hidden", String(!orderActive));
  panel.inert = !orderActive;
  if (moveFocus) (orderActive ? byId("order-title") : byId("buy-button")).focus();
}

/** Shows a message under the active layer's button and clears the other layer's. */
export function sayOnStage(orderActive, text, tone = "error") {
  const [active, other] = orderActive ? ["order-message", "message"] : ["message", "order-message"];
  const el = byId(active);
  el.dataset.tone = tone;
  if (el.textContent !== text) el.textContent = text;
  byId(other).textContent = "";
}
