import { callApi } from "./api.js";
import { contents } from "./api-contents.js";
import { byId, h } from "./dom.js";
import {
  operationAnchor,
  operations,
  operationsByTag,
  schemaAnchor,
  schemeAnchor,
  schemeUsage,
  tagAnchor,
} from "./openapi-doc.js";
import { operationView } from "./operation-view.js";
import { prose } from "./rich-text.js";
import { schemaBlock } from "./schema-tree.js";

/**
 * The API reference page (`/docs`): fetches the engine's OpenAPI document and renders it: overview,
 * authentication, the operations by tag, the schemas. Everything shown comes from the document.
 */
const SOURCE = "/api/openapi.json";

const opLabel = (op) => `${op.method.toUpperCase()} ${op.path}`;

function titled(id, title, ...content) {
  return h(
    "section",
    { id, class: "docs-section", "aria-labelledby": `${id}-title` },
    h("h2", { id: `${id}-title` }, title),
    ...content,
  );
}

function overview(doc) {
  const info = doc.info ?? {};
  const servers = doc.servers?.length ? doc.servers.map((server) => server.url) : [location.origin];
  return h(
    "section",
    { id: "overview", class: "docs-section overview", "aria-labelledby": "docs-title" },
    h("h1", { id: "docs-title" }, info.title ?? "API"),
    h(
      "p",
      { class: "docs-meta" },
      info.version ? h("span", { class: "badge" }, `Version ${info.version}`) : null,
      h("span", { class: "badge" }, `OpenAPI ${doc.openapi ?? "?"}`),
    ),
    prose(info.description, "prose lede"),
    h("p", { class: "docs-base" }, "Paths are relative to ", ...servers.map((url) => h("code", {}, url))),
    h(
      "p",
      {},
      h(
        "a",
        { class: "btn btn-ghost btn-small", href: SOURCE, download: "openapi.json" },
        "Download openapi.json",
      ),
    ),
  );
}

function scheme(name, value, ops) {
  const id = schemeAnchor(name);
  const users = ops.filter((op) => op.security.some((requirement) => name in requirement));
  const links = users.flatMap((op, i) => [
    ...(i ? [", "] : []),
    h("a", { href: `#${operationAnchor(op)}` }, opLabel(op)),
  ]);
  return h(
    "article",
    { class: "card scheme", id, "aria-labelledby": `${id}-title` },
    h("h3", { id: `${id}-title` }, h("code", {}, name)),
    h("p", { class: "scheme-usage" }, h("code", {}, schemeUsage(value))),
    prose(value.description),
    h("p", { class: "hint" }, ...(users.length ? ["Used by ", ...links] : ["No operation uses it yet."])),
  );
}

function authentication(doc, ops) {
  const schemes = Object.entries(doc.components?.securitySchemes ?? {});
  if (!schemes.length) return null;
  return titled(
    "authentication",
    "Authentication",
    h("p", { class: "section-lede" }, "Each operation names the credential it needs, if any."),
    h("div", { class: "schemes" }, ...schemes.map(([name, value]) => scheme(name, value, ops))),
  );
}

function tagSection(doc, group) {
  return titled(
    tagAnchor(group.name),
    group.name,
    prose(group.description, "prose section-lede"),
    ...group.operations.map((op) => operationView(doc, op)),
  );
}

function schemas(doc) {
  const entries = Object.entries(doc.components?.schemas ?? {});
  if (!entries.length) return null;
  return titled(
    "schemas",
    "Schemas",
    ...entries.map(([name, schema]) => {
      const id = schemaAnchor(name);
      return h(
        "article",
        { class: "card schema-card", id, "aria-labelledby": `${id}-title` },
        h("h3", { id: `${id}-title` }, h("a", { class: "op-link", href: `#${id}` }, name)),
        schemaBlock(doc, schema),
      );
    }),
  );
}

function render(doc) {
  const groups = operationsByTag(doc);
  byId("toc").replaceChildren(h("h2", { class: "toc-title" }, "Contents"), contents(doc, groups));
  const sections = [
    overview(doc),
    authentication(doc, operations(doc)),
    ...groups.map((group) => tagSection(doc, group)),
    schemas(doc),
  ];
  byId("reference").replaceChildren(...sections.filter(Boolean));
  document.title = `${doc.info?.title ?? "API"} · API reference`;
}

async function load() {
  const status = byId("docs-status");
  status.className = "notice";
  status.hidden = false;
  status.textContent = "Loading the API description…";
  const r = await callApi(SOURCE);
  if (!r.ok || typeof r.data?.paths !== "object") {
    status.className = "notice notice-error";
    status.replaceChildren(
      `Could not load ${SOURCE}: ${r.ok ? "it is not an OpenAPI document." : r.error.message} `,
      h("button", { class: "link-btn", type: "button", onclick: load }, "Try again"),
    );
    return;
  }
  render(r.data);
  status.hidden = true;
  const anchor = location.hash.slice(1);
  if (anchor) document.getElementById(anchor)?.scrollIntoView();
}

load();
