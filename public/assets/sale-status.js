import { formatCountdown, formatWhen } from "./format.js";

/** How a sale's status reads to a shopper: badge text and tone. */
export function statusBadge(status) {
  switch (status) {
    case "live":
      return { text: "Live now", tone: "badge-live" };
    case "upcoming":
      return { text: "Coming soon", tone: "badge-upcoming" };
    case "sold_out":
      return { text: "Sold out", tone: "" };
    case "paused":
      return { text: "Paused", tone: "badge-paused" };
    default:
      return { text: "Ended", tone: "" };
  }
}

/**
 * The status a sale has now on the server's clock: the API's status, moved on by time alone
 * (upcoming -> live at startsAt, anything -> ended at endsAt) until the next fetch confirms it.
 */
export function statusAt(sale, now) {
  if (now >= Date.parse(sale.endsAt)) return "ended";
  if (sale.status === "upcoming" && now >= Date.parse(sale.startsAt)) return "opening";
  return sale.status;
}

/** One line on when: "Opens in 4:59 · 14:05", "Ends in 58:10". */
export function whenLine(sale, now) {
  const starts = Date.parse(sale.startsAt);
  const ends = Date.parse(sale.endsAt);
  if (now < starts) return `Opens in ${formatCountdown(starts - now)} · ${formatWhen(starts)}`;
  if (now < ends) return sale.status === "sold_out" ? "Sold out" : `Ends in ${formatCountdown(ends - now)}`;
  return "Ended";
}
