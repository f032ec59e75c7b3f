const locale = document.documentElement.lang || undefined;
const currency = document.querySelector('meta[name="shop-currency"]')?.getAttribute("content") || "USD";
const money = new Intl.NumberFormat(locale, { style: "currency", currency });
const integer = new Intl.NumberFormat(locale);
const clockTime = new Intl.DateTimeFormat(locale, { hour: "2-digit", minute: "2-digit" });
const dateTime = new Intl.DateTimeFormat(locale, {
  weekday: "short",
  day: "numeric",
  month: "short",
  hour: "2-digit",
  minute: "2-digit",
});

/** Integer cents as the shop's currency, e.g. 4900 -> "$49.00". */
export const formatMoney = (cents) => money.format(cents / 100);

export const formatInt = (n) => integer.format(n);

/** A date (ms or ISO) in the visitor's time zone; today's dates show only the time. */
export function formatWhen(value) {
  const date = new Date(value);
  return date.toDateString() === new Date().toDateString() ? clockTime.format(date) : dateTime.format(date);
}

const pad = (n) => String(n).padStart(2, "0");

/**
 * A countdown: "4:05", "1:04:05", "2d 03:04:05". Never negative. Rounds up by default (a sale opens
 * as it shows 0:00); "down" for deadlines (never promise a second that is not there).
 */
export function formatCountdown(ms, round = "up") {
  const total = Math.max(0, round === "up" ? Math.ceil(ms / 1000) : Math.floor(ms / 1000));
  const days = Math.floor(total / 86_400);
  const hours = Math.floor((total % 86_400) / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  if (days > 0) return `${days}d ${pad(hours)}:${pad(minutes)}:${pad(seconds)}`;
  if (hours > 0) return `${hours}:${pad(minutes)}:${pad(seconds)}`;
  return `${minutes}:${pad(seconds)}`;
}

/** A duration in words for messages: "8 seconds", "2 minutes". */
export function formatSeconds(seconds) {
  const s = Math.max(1, Math.ceil(seconds));
  if (s < 90) return `${s} second${s === 1 ? "" : "s"}`;
  const m = Math.round(s / 60);
  return `${m} minute${m === 1 ? "" : "s"}`;
}
