import { h } from "./dom.js";
import { deref, operationAnchor, schemeAnchor } from "./openapi-doc.js";
import { prose } from "./rich-text.js";
import { fieldItem, schemaBlock } from "./schema-tree.js";

function section(title, ...content) {
  return h("section", { class: "op-part" }, h("h4", {}, title), ...content);
}

function securityLine(doc, requirements) {
  const schemes = doc.components?.securitySchemes ?? {};
  const link = (name) =>
    h("a", { href: `#${schemeAnchor(name)}` }, schemes[name] ? name : `${name} (undeclared)`);
  const options = requirements.map((requirement) => {
    const names = Object.keys(requirement);
    if (!names.length) return ["no credential"];
    return names.flatMap((name, i) => (i === 0 ? [link(name)] : [" and ", link(name)]));
  });
  return h(
    "p",
    { class: "op-security" },
    h("span", { class: "fact-label" }, "Authentication"),
    ...(options.length
      ? options.flatMap((option, i) => (i === 0 ? option : [" or ", ...option]))
      : ["none: a public route"]),
  );
}

function parameters(doc, list) {
  if (!list.length) return null;
  return section(
    "Parameters",
    h(
      "ul",
      { class: "tree" },
      ...list.map((raw) => {
        const p = deref(doc, raw);
        return fieldItem(doc, {
          name: p.name,
          where: `in ${p.in}`,
          schema: p.schema,
          required: p.required,
          description: p.description,
          example: p.example ?? Object.values(p.examples ?? {})[0]?.value,
        });
      }),
    ),
  );
}

/** Each media type of a request or response body with its schema; collapsed unless `open`. */
function bodies(doc, content, open) {
  return Object.entries(content ?? {}).map(([mediaType, media]) =>
    h(
      "details",
      { class: "body", open },
      h("summary", {}, "Body ", h("code", {}, mediaType)),
      schemaBlock(doc, media.schema),
    ),
  );
}

function requestBody(doc, raw) {
  if (!raw) return null;
  const body = deref(doc, raw);
  return section(
    "Request body",
    h("p", { class: "hint" }, body.required ? "Required." : "Optional."),
    prose(body.description),
    ...bodies(doc, body.content, true),
  );
}

function statusTone(status) {
  const first = String(status)[0];
  return first === "2" || first === "3" ? "status-ok" : first === "4" ? "status-client" : "status-server";
}

function response(doc, status, raw) {
  const res = deref(doc, raw);
  const headers = Object.entries(res.headers ?? {}).map(([name, header]) => {
    const hd = deref(doc, header);
    return fieldItem(doc, {
      name,
      where: "header",
      schema: hd.schema,
      required: hd.required,
      description: hd.description,
      example: hd.example,
    });
  });
  return h(
    "li",
    { class: "response" },
    h("h5", { class: "response-head" }, h("span", { class: `status ${statusTone(status)}` }, status)),
    h(
      "div",
      { class: "response-body" },
      prose(res.description, "prose response-desc"),
      headers.length ? h("ul", { class: "tree", "aria-label": `Headers of ${status}` }, ...headers) : null,
      ...bodies(doc, res.content, statusTone(status) === "status-ok"),
    ),
  );
}

/**
 * One operation as an article: method and path (a link to itself), summary, description, who may call
 * it, parameters, request body and every response with its headers and body schema.
 *
 * @example
 * tagSection.append(operationView(doc, op));
 */
export function operationView(doc, op) {
  const anchor = operationAnchor(op);
  const method = op.method.toUpperCase();
  return h(
    "article",
    { class: "card operation", id: anchor, "aria-labelledby": `${anchor}-title` },
    h(
      "h3",
      { class: "op-title", id: `${anchor}-title` },
      h(
        "a",
        { class: "op-link", href: `#${anchor}` },
        h("span", { class: `method method-${op.method}` }, method),
        " ",
        h("code", { class: "op-path" }, op.path),
      ),
      op.webhook ? h("span", { class: "mark" }, "webhook") : null,
      op.deprecated ? h("span", { class: "mark" }, "deprecated") : null,
    ),
    op.summary ? h("p", { class: "op-summary" }, op.summary) : null,
    prose(op.description),
    securityLine(doc, op.security),
    parameters(doc, op.parameters),
    requestBody(doc, op.requestBody),
    section(
      "Responses",
      h(
        "ul",
        { class: "responses" },
        ...Object.entries(op.responses ?? {}).map(([status, res]) => response(doc, status, res)),
      ),
    ),
  );
}
