import { callApi } from "./api.js";
import { serverNow } from "./clock.js";

const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 2000;
const SETTLED_DELAY_MS = 5000;

/**
 * Polls `GET /api/orders/:id` and reports each new state to `onChange(order)` (or `onError(result)`).
 * While the order is queued the delay grows from 250 ms to 2 s; while awaiting payment it checks every
 * 5 s, and every 2 s once the payment window has run out (until the order shows as expired). Stops on a
 * final state. Returns `stop()`.
 *
 * @example
 * const stop = trackOrder(orderId, token, { onChange: render });
 */
export function trackOrder(orderId, token, { onChange, onError }) {
  let stopped = false;
  let timer = null;
  let delay = FIRST_DELAY_MS;
  let last = null;
  let inFlight = false;

  async function poll() {
    if (stopped || inFlight) return;
    inFlight = true;
    const r = await callApi(`/api/orders/${encodeURIComponent(orderId)}`, { token });
    inFlight = false;
    if (stopped) return;
    if (r.ok) {
      const order = r.data;
      if (!last || last.status !== order.status) onChange(order);
      last = order;
      if (order.status === "paid" || order.status === "expired" || order.status === "cancelled") return;
      if (order.status === "queued") delay = Math.min(MAX_DELAY_MS, Math.round(delay * 1.6));
      else delay = Date.parse(order.expiresAt) <= serverNow() ? MAX_DELAY_MS : SETTLED_DELAY_MS;
    } else if (r.status === 0 || r.status >= 500 || r.status === 429) {
      delay = Math.min(MAX_DELAY_MS * 2, Math.max(delay * 2, (r.retryAfter ?? 0) * 1000));
    } else {
      onError?.(r);
      return;
    }
    timer = setTimeout(poll, delay);
  }

  poll();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
    /** Polls now (after a pay or cancel, or when the payment window has just closed). */
    refresh() {
      if (stopped || inFlight) return;
      clearTimeout(timer);
      delay = FIRST_DELAY_MS;
      poll();
    },
  };
}
