import { h } from "./dom.js";

/**
 * An operator list from an `adminApi` answer into `body`: the error's message, the `empty` line when
 * there are no rows, or a table of `headings` with one `row(item)` (its cells) per item.
 *
 * @example
 * showTable(body, await adminApi("/audit"), { rows: (d) => d.entries, empty: "None yet.", headings: ["When"], row: (e) => [h("td", {}, e.at)] });
 */
export function showTable(body, answer, { rows, empty, headings, row }) {
  if (!answer.ok) {
    body.replaceChildren(h("p", { class: "notice notice-error" }, answer.error.message));
    return;
  }
  const items = rows(answer.data);
  if (!items.length) {
    body.replaceChildren(h("p", { class: "muted" }, empty));
    return;
  }
  body.replaceChildren(
    h(
      "div",
      { class: "table-scroll" },
      h(
        "table",
        {},
        h("thead", {}, h("tr", {}, ...headings.map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, ...items.map((item) => h("tr", {}, ...row(item)))),
      ),
    ),
  );
}
