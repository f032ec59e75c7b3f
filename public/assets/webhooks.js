import { adminApi } from "./admin-session.js";
import { byId, h, setText } from "./dom.js";
import { formatWhen } from "./format.js";

const ALL_EVENTS = [
  "order.reserved",
  "order.awaiting_payment",
  "order.paid",
  "order.expired",
  "order.cancelled",
  "order.refunded",
  "sale.live",
  "sale.paused",
  "sale.resumed",
  "sale.sold_out",
  "sale.ended",
  "sale.stock_adjusted",
];

/**
 * The shop's webhook endpoints (`/api/admin/webhooks`): listed with a Test and a Remove button; the form
 * adds one for every event and shows its secret once.
 */
export function mountWebhooks() {
  const body = byId("webhooks");
  const error = byId("webhook-error");
  let secretNote = null;

  async function act(path, method, done) {
    secretNote = null;
    const r = await adminApi(path, { method });
    setText(error, r.ok ? done : r.error.message);
    await refresh();
  }

  async function refresh() {
    const r = await adminApi("/webhooks");
    if (!r.ok) {
      body.replaceChildren(h("p", { class: "notice notice-error" }, r.error.message));
      return;
    }
    const rows = r.data.endpoints.map((e) =>
      h(
        "tr",
        {},
        h("td", {}, h("code", {}, e.url)),
        h("td", {}, e.events.length === ALL_EVENTS.length ? "all" : e.events.join(", ")),
        h("td", { class: "num" }, formatWhen(e.createdAt)),
        h(
          "td",
          {},
          h(
            "button",
            {
              class: "link-btn",
              type: "button",
              onclick: () => act(`/webhooks/${e.endpointId}/test`, "POST", "Test event queued."),
            },
            "Test",
          ),
          " ",
          h(
            "button",
            {
              class: "link-btn",
              type: "button",
              onclick: () => act(`/webhooks/${e.endpointId}`, "DELETE", "Removed."),
            },
            "Remove",
          ),
        ),
      ),
    );
    body.replaceChildren(
      ...(secretNote ? [secretNote] : []),
      rows.length
        ? h(
            "div",
            { class: "table-scroll" },
            h(
              "table",
              {},
              h(
                "thead",
                {},
                h("tr", {}, ...["URL", "Events", "Added", ""].map((t) => h("th", { scope: "col" }, t))),
              ),
              h("tbody", {}, ...rows),
            ),
          )
        : h("p", { class: "muted" }, "No endpoints. Add one to hear every order and sale change."),
    );
  }

  byId("webhook-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const url = byId("webhook-url").value.trim();
    const r = await adminApi("/webhooks", { method: "POST", body: { url, events: ALL_EVENTS } });
    if (!r.ok) {
      setText(error, r.error.message);
      return;
    }
    setText(error, "");
    byId("webhook-url").value = "";
    secretNote = h("p", { class: "notice" }, "Signing secret (shown once): ", h("code", {}, r.data.secret));
    await refresh();
  });
  byId("webhooks-refresh").addEventListener("click", refresh);
  return { refresh };
}
