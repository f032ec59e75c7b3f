import { formatSeconds } from "./format.js";

/**
 * One table from the API's error codes to what a shopper reads. `error` is the API's error body
 * (`{ code, message, remaining?, mayStillBuy?, held?, variants? }`), `retryAfter` the wait in seconds if
 * any. On a sale of several variants the page passes `variantName(variantId)`: a cart's answers then name
 * the options they are about.
 */
export function shopperMessage(error, { retryAfter = null, perUserLimit = null, variantName = null } = {}) {
  const wait = retryAfter ? formatSeconds(retryAfter) : "a few seconds";
  const units = (n) => `${n} ${n === 1 ? "unit" : "units"}`;
  switch (error.code) {
    case "SOLD_OUT":
      return variantName
        ? "Sold out: every option in your cart has been claimed. Pick another."
        : "Sold out. Every unit has been claimed.";
    case "INSUFFICIENT_STOCK":
      if (variantName && Array.isArray(error.variants) && error.variants.length > 0)
        return `Only ${listOf(error.variants.map((v) => (v.remaining > 0 ? `${units(v.remaining)} of ${variantName(v.variantId)}` : `none of ${variantName(v.variantId)}`)))} left. Your cart now holds what there is; check it and buy again.`;
      return `Only ${units(error.remaining ?? error.variants?.[0]?.remaining ?? 0)} left. Lower the quantity and try again.`;
    case "UNKNOWN_VARIANT":
      return "An option in your cart is no longer on offer. Reload the page to see what is.";
    case "ALREADY_PURCHASED":
      return perUserLimit
        ? `You already hold the limit of ${units(perUserLimit)} for this sale.`
        : "You already hold the most units one shopper may buy.";
    case "LIMIT_EXCEEDED":
      if (variantName && typeof error.variantId === "string")
        return `Limit reached for ${variantName(error.variantId)}: you can buy ${units(error.mayStillBuy ?? 0)} more of it at most.`;
      if (variantName && error.mayStillBuy === undefined)
        return "Your cart holds more than one shopper may buy. Lower the quantities and try again.";
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

/** Names as a sentence's list: "40", "40 and 41", "40, 41 and 43". */
export function listOf(names) {
  if (names.length <= 1) return names.join("");
  return `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/** Errors that mean "the same attempt may succeed if sent again" (same Idempotency-Key). */
export function isTransient(result) {
  return result.status === 0 || result.status === 429 || result.status >= 500;
}
