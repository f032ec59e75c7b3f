import { adminApi } from "./admin-session.js";
import { showTable } from "./admin-table.js";
import { byId, h } from "./dom.js";
import { formatWhen } from "./format.js";

const SHOWN = 20;

/**
 * Who changed what (`GET /api/admin/audit`): the latest entries, refreshed when the console opens and
 * after every change the console makes (the `admin-change` event of admin-session.js).
 */
export function mountAuditLog() {
  const body = byId("audit-log");

  async function refresh() {
    showTable(body, await adminApi(`/audit?limit=${SHOWN}`), {
      rows: (data) => data.entries,
      empty: "No changes recorded yet.",
      headings: ["When", "Who", "What", "Sale", "Request"],
      row: (e) => [
        h("td", { class: "num" }, formatWhen(e.at)),
        h("td", {}, e.actor),
        h("td", {}, h("code", {}, e.action), e.target ? ` ${e.target}` : ""),
        h("td", {}, e.saleId ? h("code", {}, e.saleId) : "–"),
        h("td", {}, h("code", {}, e.requestId)),
      ],
    });
  }

  byId("audit-refresh").addEventListener("click", refresh);
  window.addEventListener("admin-change", () => refresh());
  return { refresh };
}
