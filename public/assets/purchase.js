import { callApi } from "./api.js";
import { sleep } from "./dom.js";
import { isTransient } from "./messages.js";

const MAX_RETRIES = 3;

/**
 * One shopper click on "Buy": a fresh Idempotency-Key, reused for every automatic retry of that click
 * (network failure, 429, 503), so a retry can never reserve twice. `onRetry(result, waitMs)` lets the
 * page show the wait. Returns the last API result (202 `{ orderId, status, quantity, expiresAt }` or an error).
 * A cart (a sale of several variants) passes `items` (`[{ variantId, quantity }]`), reserved all or none.
 *
 * @example
 * const r = await buyOnce({ productToken, quantity: 1, token, onRetry: showWait });
 * const c = await buyOnce({ productToken, items: [{ variantId: "42", quantity: 1 }], token });
 */
export async function buyOnce({ productToken, quantity, items, token, admission, onRetry }) {
  const idempotencyKey = crypto.randomUUID();
  const headers = { "Idempotency-Key": idempotencyKey };
  // queue and draw sales: the ticket's admission token (queue-panel.js)
  if (admission) headers.Admission = admission;
  for (let attempt = 0; ; attempt++) {
    const result = await callApi(`/api/buy/${encodeURIComponent(productToken)}`, {
      method: "POST",
      token,
      body: items ? { items } : { quantity },
      headers,
    });
    if (result.ok || !isTransient(result) || attempt >= MAX_RETRIES) return result;
    const waitMs = (result.retryAfter ?? 0.5 * 2 ** attempt) * 1000;
    onRetry?.(result, waitMs);
    await sleep(waitMs);
  }
}

/** Pays an order (a demo payment reference stands in for the provider's); retries while it is not ready. */
export async function payOrder(orderId, token, onRetry) {
  const paymentRef = `demo-${crypto.randomUUID()}`;
  for (let attempt = 0; ; attempt++) {
    const result = await callApi(`/api/orders/${encodeURIComponent(orderId)}/pay`, {
      method: "POST",
      token,
      body: { paymentRef },
    });
    const notReady = result.error?.code === "ORDER_NOT_READY";
    if (result.ok || !(notReady || isTransient(result)) || attempt >= MAX_RETRIES + 2) return result;
    const waitMs = (result.retryAfter ?? 1) * 1000;
    onRetry?.(result, waitMs);
    await sleep(waitMs);
  }
}

/**
 * Asks for the order's checkout (`{ orderId, provider, url, expiresAt }`); retries while the order is
 * still being written. With `provider` other than `local` the page sends the shopper to `url` to pay.
 */
export async function openCheckout(orderId, token, onRetry) {
  for (let attempt = 0; ; attempt++) {
    const result = await callApi(`/api/orders/${encodeURIComponent(orderId)}/checkout`, {
      method: "POST",
      token,
    });
    const notReady = result.error?.code === "ORDER_NOT_READY";
    if (result.ok || !(notReady || isTransient(result)) || attempt >= MAX_RETRIES + 2) return result;
    const waitMs = (result.retryAfter ?? 1) * 1000;
    onRetry?.(result, waitMs);
    await sleep(waitMs);
  }
}

export async function cancelOrder(orderId, token) {
  return callApi(`/api/orders/${encodeURIComponent(orderId)}/cancel`, { method: "POST", token });
}
