import { h } from "./dom.js";
import { operationAnchor, schemaAnchor, tagAnchor } from "./openapi-doc.js";

/**
 * The page's contents: overview, authentication, each tag with its operations (method and path), the
 * schemas; every entry links to its anchor on the page. `groups` as `operationsByTag(doc)` returns them.
 *
 * @example
 * byId("toc").append(contents(doc, operationsByTag(doc)));
 */
export function contents(doc, groups) {
  const item = (href, label, children = null) => h("li", {}, h("a", { href }, label), children);
  const opItem = (op) =>
    h(
      "li",
      {},
      h(
        "a",
        { href: `#${operationAnchor(op)}` },
        h("span", { class: `method method-${op.method}` }, op.method.toUpperCase()),
        " ",
        op.path,
      ),
    );
  const schemaItems = Object.keys(doc.components?.schemas ?? {}).map((name) =>
    h("li", {}, h("a", { href: `#${schemaAnchor(name)}` }, name)),
  );
  return h(
    "ul",
    { class: "toc-list" },
    item("#overview", "Overview"),
    doc.components?.securitySchemes ? item("#authentication", "Authentication") : null,
    ...groups.map((group) =>
      item(
        `#${tagAnchor(group.name)}`,
        group.name,
        h("ul", { class: "toc-ops" }, ...group.operations.map(opItem)),
      ),
    ),
    doc.components?.schemas
      ? item("#schemas", "Schemas", h("ul", { class: "toc-ops" }, ...schemaItems))
      : null,
  );
}
