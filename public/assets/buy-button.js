import { formatMoney, formatWhen } from "./format.js";

/**
 * What the buy button says and whether it can be pressed. It opens only when the sale is live and the
 * API has handed out the product token; a signed-out shopper gets "Sign in to buy" instead. A cart passes
 * its `amountCents` (and its units as `quantity`); an empty cart cannot be bought.
 *
 * @example
 * buyButtonState({ sale, status: "live", signedIn: true, buying: false, waitMs: 0, quantity: 2 })
 * // { label: "Buy now · $258.00", enabled: true }
 */
export function buyButtonState({ sale, status, signedIn, buying, waitMs, quantity, amountCents }) {
  let label = `Buy now · ${formatMoney(amountCents ?? sale.priceCents * quantity)}`;
  let enabled = status === "live" && Boolean(sale.productToken) && !buying && waitMs <= 0 && quantity > 0;
  if (status === "upcoming" || status === "opening") label = `Opens ${formatWhen(sale.startsAt)}`;
  else if (status === "sold_out") label = "Sold out";
  else if (status === "paused") label = "Paused";
  else if (status === "ended") label = "Sale ended";
  else if (buying) label = "Reserving…";
  else if (waitMs > 0) label = `Try again in ${Math.ceil(waitMs / 1000)} s`;
  else if (quantity <= 0) label = "Pick an option to buy";
  if (!signedIn && status !== "sold_out" && status !== "ended") {
    label = "Sign in to buy";
    enabled = true;
  }
  return { label, enabled };
}
