import { h } from "./dom.js";
import { formatInt } from "./format.js";

function idList(title, ids) {
  if (!ids.length) return [];
  return [
    h("h4", {}, `${title} (${ids.length})`),
    h("ul", {}, ...ids.slice(0, 20).map((id) => h("li", {}, id))),
  ];
}

/** Renders `POST …/reconcile`'s report: a verdict, the figures, what was repaired, the raw JSON. */
export function renderReconcileReport(el, report) {
  const problems = report.mismatched.length + report.ordersWithoutReservation.length + (report.drift ? 1 : 0);
  const verdict = problems
    ? h(
        "p",
        { class: "notice notice-error" },
        `Found ${problems} problem(s).${report.paused ? " The sale was paused." : ""}`,
      )
    : h("p", { class: "notice notice-ok" }, "Redis and Postgres agree. Nothing to repair.");
  const fact = (label, value) => h("div", {}, h("dt", {}, label), h("dd", { class: "num" }, value));
  el.replaceChildren(
    h("h3", {}, "Reconciliation report"),
    verdict,
    h(
      "dl",
      {},
      fact("Ledger entries checked", formatInt(report.checkedLedgerEntries)),
      fact("Orders republished", formatInt(report.republished.length)),
      fact("Orders without reservation", formatInt(report.ordersWithoutReservation.length)),
      fact("Mismatched orders", formatInt(report.mismatched.length)),
      fact("Stock drift (units)", formatInt(report.drift)),
      fact("Ledger entries trimmed", formatInt(report.trimmed)),
      fact("Invariant", report.stats?.invariantHolds ? "Holds" : "Broken"),
      fact("Sale paused", report.paused ? "Yes" : "No"),
    ),
    ...idList("Republished", report.republished),
    ...idList("Orders without reservation", report.ordersWithoutReservation),
    ...idList(
      "Mismatched",
      report.mismatched.map(
        (m) =>
          `${m.orderId}: ledger ${m.ledger.userId}×${m.ledger.quantity}, db ${m.db.userId}×${m.db.quantity}`,
      ),
    ),
    h("details", {}, h("summary", {}, "Full report (JSON)"), h("pre", {}, JSON.stringify(report, null, 2))),
  );
}
