import { adminApi } from "./admin-session.js";
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
    const r = await adminApi(`/audit?limit=${SHOWN}`);
    if (!r.ok) {
      body.replaceChildren(h("p", { class: "notice notice-error" }, r.error.message));
      return;
    }
    const rows = r.data.entries;
    if (!rows.length) {
      body.replaceChildren(h("p", { class: "muted" }, "No changes recorded yet."));
      return;
    }
    body.replaceChildren(
      h(
        "div",
        { class: "table-scroll" },
        h(
          "table",
          {},
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ...["When", "Who", "What", "Sale", "Request"].map((t) => h("th", { scope: "col" }, t)),
            ),
          ),
          h(
            "tbody",
            {},
            ...rows.map((e) =>
              h(
                "tr",
                {},
                h("td", { class: "num" }, formatWhen(e.at)),
                h("td", {}, e.actor),
                h("td", {}, h("code", {}, e.action), e.target ? ` ${e.target}` : ""),
                h("td", {}, e.saleId ? h("code", {}, e.saleId) : "–"),
                h("td", {}, h("code", {}, e.requestId)),
              ),
            ),
          ),
        ),
      ),
    );
  }

  byId("audit-refresh").addEventListener("click", refresh);
  window.addEventListener("admin-change", () => refresh());
  return { refresh };
}
