import { formatSeconds } from "./format.js";

/**
 * One table from the API's error codes to what a shopper reads. `error` is the API's error body
 * (`{ code, message, remaining?, mayStillBuy?, held? }`), `retryAfter` the wait in seconds if any.
 */
export function shopperMessage(error, { retryAfter = null, perUserLimit = null } = {}) {
  const wait = retryAfter ? formatSeconds(retryAfter) : "a few seconds";
  const units = (n) => `${n} ${n === 1 ? "unit" : "units"}`;
  switch (error.code) {
    case "SOLD_OUT":
      return "Sold out. Every unit has been claimed.";
    case "INSUFFICIENT_STOCK":
      return `Only ${units(error.remaining ?? 0)} left. Lower the quantity and try again.`;
    case "ALREADY_PURCHASED":
      return perUserLimit
        ? `You already hold the limit of ${units(perUserLimit)} for this sale.`
        : "You already hold the most units one shopper may buy.";
    case "LIMIT_EXCEEDED":
      return `Limit reached: you can buy ${units(error.mayStillBuy ?? 0)} more at most.`;
    case "RATE_LIMITED":
      return `Too many attempts. Please wait ${wait} and try again.`;
    case "UNAVAILABLE":
      return `We are briefly unavailable and nothing was reserved. Try again in ${wait}.`;
    case "NETWORK":
      return "No connection. Check your network; nothing was charged.";
    case "SALE_NOT_STARTED":
      return "The sale has not started yet. The button opens when the countdown ends.";
    case "SALE_ENDED":
      return "This sale has ended.";
    case "SALE_PAUSED":
      return "The shop has paused this sale for a moment. Try again shortly.";
    case "UNAUTHENTICATED":
      return "Please sign in again to buy.";
    case "UNKNOWN_PRODUCT":
      return "This product is no longer on sale. Reload the page to see what is.";
    case "UNKNOWN_SALE":
      return "We could not find this sale. It may have ended.";
    case "UNKNOWN_ORDER":
      return "We could not find this order on your account.";
    case "ORDER_EXPIRED":
      return "The time to pay ran out, so the item went back on sale.";
    case "ORDER_CANCELLED":
      return "This order was cancelled.";
    case "ORDER_PAID":
      return "This order is already paid, so it can no longer be cancelled.";
    case "CHECKOUT_REQUIRED":
      return "Pay on the checkout page: press Pay again to open it.";
    case "ORDER_NOT_READY":
      return "Your order is still being confirmed. We will retry in a moment.";
    case "INVALID_REQUEST":
      return "Something in that request was not right. Reload the page and try again.";
    case "PAYLOAD_TOO_LARGE":
      return "That request was too large.";
    case "CONFLICT":
      return error.message || "That conflicts with the current state. Reload and try again.";
    default:
      return "Something went wrong on our side. Please try again.";
  }
}

/** Errors that mean "the same attempt may succeed if sent again" (same Idempotency-Key). */
export function isTransient(result) {
  return result.status === 0 || result.status === 429 || result.status >= 500;
}
