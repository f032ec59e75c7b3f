import { h } from "./dom.js";
import { deref, schemaAnchor, schemaName } from "./openapi-doc.js";
import { prose } from "./rich-text.js";

/** Nesting shown inline; deeper levels (and every named schema) are a link to the Schemas section. */
const MAX_DEPTH = 6;

const isSchema = (value) => value !== null && typeof value === "object";
const show = (value) => (typeof value === "string" ? value : JSON.stringify(value));

function joined(parts, separator) {
  return parts.flatMap((part, i) => (i === 0 ? part : [separator, ...part]));
}

/** A schema's type in words, named schemas as links: "string (date-time)", "array of Sale", "string | null". */
export function typeNodes(schema = {}) {
  const name = schemaName(schema.$ref);
  if (name) return [h("a", { class: "type-ref", href: `#${schemaAnchor(name)}` }, name)];
  if (schema.$ref) return [schema.$ref];
  const variants = schema.oneOf ?? schema.anyOf;
  if (variants) return joined(variants.map(typeNodes), " | ");
  if (schema.allOf) return joined(schema.allOf.map(typeNodes), " & ");
  const declared = schema.type ?? (schema.properties ? "object" : schema.items ? "array" : undefined);
  const types =
    declared === undefined ? [schema.const !== undefined ? typeof schema.const : "any"] : [declared];
  const all = [...types.flat(), ...(schema.nullable ? ["null"] : [])];
  return joined(
    all.map((type) => {
      if (type === "array") return ["array of ", ...typeNodes(schema.items ?? {})];
      if (type === "object" && !schema.properties && isSchema(schema.additionalProperties))
        return ["map of ", ...typeNodes(schema.additionalProperties)];
      return [schema.format && type !== "null" ? `${type} (${schema.format})` : type];
    }),
    " | ",
  );
}

/** The schema's rules and samples as [label, value] pairs: enum, bounds, pattern, default, example. */
export function schemaFacts(schema = {}, example = undefined) {
  const facts = [];
  const range = (low, high, unit) =>
    low !== undefined && high !== undefined
      ? `${low}–${high}${unit}`
      : low !== undefined
        ? `≥ ${low}${unit}`
        : `≤ ${high}${unit}`;
  if (schema.enum) facts.push(["one of", schema.enum.map(show)]);
  if (schema.const !== undefined) facts.push(["always", [show(schema.const)]]);
  if (schema.minimum !== undefined) facts.push(["min", [show(schema.minimum)]]);
  if (schema.exclusiveMinimum !== undefined) facts.push(["above", [show(schema.exclusiveMinimum)]]);
  if (schema.maximum !== undefined) facts.push(["max", [show(schema.maximum)]]);
  if (schema.exclusiveMaximum !== undefined) facts.push(["below", [show(schema.exclusiveMaximum)]]);
  if (schema.multipleOf !== undefined) facts.push(["multiple of", [show(schema.multipleOf)]]);
  if (schema.minLength !== undefined || schema.maxLength !== undefined)
    facts.push(["length", [range(schema.minLength, schema.maxLength, "")]]);
  if (schema.minItems !== undefined || schema.maxItems !== undefined)
    facts.push(["items", [range(schema.minItems, schema.maxItems, "")]]);
  if (schema.uniqueItems) facts.push(["items", ["unique"]]);
  if (schema.pattern) facts.push(["pattern", [schema.pattern]]);
  if (schema.default !== undefined) facts.push(["default", [show(schema.default)]]);
  const sample = example ?? schema.example ?? schema.examples?.[0];
  if (sample !== undefined) facts.push(["example", [show(sample)]]);
  return facts;
}

function factList(schema, example) {
  const facts = schemaFacts(schema, example);
  if (!facts.length) return null;
  return h(
    "ul",
    { class: "schema-facts" },
    ...facts.map(([label, values]) =>
      h("li", {}, h("span", { class: "fact-label" }, label), ...values.map((v) => h("code", {}, v))),
    ),
  );
}

/**
 * One named field (a property, a parameter, a header): name, where it goes, type, required or optional,
 * description, rules, and its own fields nested below when its schema is inline.
 */
export function fieldItem(doc, { name, where, schema = {}, required, description, example, depth = 0 }) {
  const flags = [
    schema.deprecated && "deprecated",
    schema.readOnly && "read-only",
    schema.writeOnly && "write-only",
  ];
  return h(
    "li",
    { class: "field-item" },
    h(
      "div",
      { class: "field-head" },
      h("code", { class: "field-name" }, name),
      where ? h("span", { class: "field-in" }, where) : null,
      h("span", { class: "type" }, ...typeNodes(schema)),
      h("span", { class: required ? "mark mark-required" : "mark" }, required ? "required" : "optional"),
      ...flags.filter(Boolean).map((flag) => h("span", { class: "mark" }, flag)),
    ),
    prose(description ?? schema.description, "prose field-desc"),
    factList(schema, example),
    nested(doc, schema, depth + 1),
  );
}

function nested(doc, schema, depth) {
  if (depth > MAX_DEPTH || !isSchema(schema) || schema.$ref) return null;
  if (schema.properties) {
    const required = new Set(schema.required ?? []);
    return h(
      "ul",
      { class: "tree" },
      ...Object.entries(schema.properties).map(([name, prop]) =>
        fieldItem(doc, { name, schema: prop, required: required.has(name), depth }),
      ),
      schema.additionalProperties === false ? h("li", { class: "tree-note" }, "No other fields.") : null,
    );
  }
  if (isSchema(schema.items)) return nested(doc, schema.items, depth);
  if (isSchema(schema.additionalProperties)) return nested(doc, schema.additionalProperties, depth);
  const variants = schema.oneOf ?? schema.anyOf ?? schema.allOf;
  if (!variants) return null;
  return h(
    "ol",
    { class: "variants", "aria-label": schema.allOf ? "All of" : "One of" },
    ...variants.map((variant) =>
      h(
        "li",
        {},
        h("span", { class: "type" }, ...typeNodes(variant)),
        factList(variant),
        nested(doc, variant, depth + 1),
      ),
    ),
  );
}

/**
 * A body or component schema as a readable tree: its type (a named schema links to its entry), its
 * description and rules, then its fields. A named schema at the top is expanded one level; named
 * schemas inside it are links, so cycles end.
 *
 * @example
 * h("div", {}, schemaBlock(doc, { $ref: "#/components/schemas/Sale" }))
 */
export function schemaBlock(doc, schema = {}) {
  const target = deref(doc, schema);
  return h(
    "div",
    { class: "schema" },
    h("p", { class: "schema-type" }, h("span", { class: "type" }, ...typeNodes(schema))),
    prose(target.description),
    factList(target),
    nested(doc, target, 0),
  );
}
