import { adminApi } from "./admin-session.js";
import { showTable } from "./admin-table.js";
import { byId, h } from "./dom.js";
import { formatWhen } from "./format.js";

function preview(text) {
  if (!text) return "–";
  return text.length > 140 ? `${text.slice(0, 140)}…` : text;
}

/** The jobs QStash gave up on (`GET /api/admin/dead-letters`), newest first. */
export function mountDeadLetters() {
  const body = byId("dead-letters");

  /** Hands the job to QStash again (`POST /api/admin/dead-letters/:id/replay`); it leaves the list. */
  async function replay(id) {
    const r = await adminApi(`/dead-letters/${id}/replay`, { method: "POST" });
    if (!r.ok) body.prepend(h("p", { class: "notice notice-error" }, r.error.message));
    else await refresh();
  }

  async function refresh() {
    showTable(body, await adminApi("/dead-letters"), {
      rows: (data) => data.deadLetters,
      empty: "No dead letters. Every job was delivered.",
      headings: ["When", "Job", "Status", "Body", "Last response", ""],
      row: (d) => [
        h("td", { class: "num" }, formatWhen(d.at)),
        h("td", {}, h("code", {}, new URL(d.url, location.origin).pathname)),
        h("td", { class: "num" }, d.status ?? "–"),
        h("td", {}, h("code", {}, preview(d.body))),
        h("td", {}, h("code", {}, preview(d.responseBody))),
        h(
          "td",
          {},
          h("button", { class: "link-btn", type: "button", onclick: () => replay(d.id) }, "Replay"),
        ),
      ],
    });
  }

  byId("dead-refresh").addEventListener("click", refresh);
  return { refresh };
}
