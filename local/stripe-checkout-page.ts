/** The Stripe stand-in's hosted checkout page: what the shopper sees at a session's `url`. */

/** What the page shows of a session. */
export type PageSession = {
  id: string;
  status: string;
  payment_status: string;
  amount_total: number;
  currency: string;
  productName: string;
  quantity: number;
  lines: { name: string; quantity: number; unitAmount: number }[];
};

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const money = (cents: number, currency: string) =>
  escapeHtml(`${(cents / 100).toFixed(2)} ${currency.toUpperCase()}`);

/**
 * The page of one session: the product, each line, the amount, and a Pay and a Cancel button (forms posting to
 * `…/pay` and `…/cancel`); a session no longer open says so instead.
 */
export function checkoutPage(session: PageSession): string {
  const amount = `${(session.amount_total / 100).toFixed(2)} ${session.currency.toUpperCase()}`;
  const open = session.status === "open";
  const body = open
    ? `<form method="post" action="/c/pay/${escapeHtml(session.id)}/pay"><button id="pay" type="submit">Pay ${escapeHtml(amount)}</button></form>
       <form method="post" action="/c/pay/${escapeHtml(session.id)}/cancel"><button id="cancel" type="submit">Cancel</button></form>`
    : `<p id="closed">This checkout is ${escapeHtml(session.status === "complete" ? "paid" : session.status)}.</p>`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Checkout (local Stripe stand-in)</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem}
button{font-size:1.1rem;padding:.6rem 1.2rem;margin:.4rem 0;width:100%}#pay{background:#635bff;color:#fff;border:0}</style></head>
<body>
<p><small>Local Stripe stand-in: no card is charged.</small></p>
<h1>${escapeHtml(session.lines.length > 1 ? `${session.lines.length} items` : session.productName)}</h1>
<ul id="lines">${session.lines.map((l) => `<li>${escapeHtml(l.name)} × ${l.quantity}: ${money(l.quantity * l.unitAmount, session.currency)}</li>`).join("")}</ul>
<p>${session.quantity} in all — total <strong id="amount">${escapeHtml(amount)}</strong></p>
${body}
</body>
</html>`;
}
