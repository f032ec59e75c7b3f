/**
 * Reading an OpenAPI 3.x document as plain JSON: local `$ref`s, the operations grouped by tag, the anchors
 * the reference page links to. Nothing here knows the project's routes: it follows the document.
 *
 * @example
 * for (const group of operationsByTag(doc)) render(group.name, group.operations);
 */
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

const pointerToken = (segment) => decodeURIComponent(segment).replaceAll("~1", "/").replaceAll("~0", "~");

/** The node a local reference ("#/components/schemas/Sale") points at, or undefined. */
export function pointer(doc, ref) {
  if (typeof ref !== "string" || !ref.startsWith("#/")) return undefined;
  return ref
    .slice(2)
    .split("/")
    .map(pointerToken)
    .reduce((node, key) => (node === null || typeof node !== "object" ? undefined : node[key]), doc);
}

/** `value` with its `$ref` followed (through a few hops); `{}` when the reference leads nowhere. */
export function deref(doc, value) {
  let node = value ?? {};
  for (let hops = 0; hops < 8 && typeof node.$ref === "string"; hops++) node = pointer(doc, node.$ref) ?? {};
  return node;
}

/** "#/components/schemas/Sale" → "Sale"; null for any other reference. */
export function schemaName(ref) {
  const match = /^#\/components\/schemas\/([^/]+)$/.exec(typeof ref === "string" ? ref : "");
  return match ? pointerToken(match[1]) : null;
}

/** A fragment-safe id from any text: "post /api/buy/{productToken}" → "post-api-buy-productToken". */
export const slug = (text) =>
  String(text)
    .replace(/[^A-Za-z0-9_]+/g, "-")
    .replace(/^-+|-+$/g, "");

export const schemaAnchor = (name) => `schema-${slug(name)}`;
export const schemeAnchor = (name) => `auth-${slug(name)}`;
export const tagAnchor = (name) => `tag-${slug(name)}`;
export const operationAnchor = (op) => `op-${slug(op.operationId ?? `${op.method} ${op.path}`)}`;

function mergeParameters(doc, shared = [], own = []) {
  const key = (p) => {
    const param = deref(doc, p);
    return `${param.in}:${param.name}`;
  };
  const ownKeys = new Set(own.map(key));
  return [...shared.filter((p) => !ownKeys.has(key(p))), ...own];
}

function collect(doc, items, webhook) {
  const list = [];
  for (const [path, raw] of Object.entries(items ?? {})) {
    const item = deref(doc, raw);
    for (const method of METHODS) {
      const op = item[method];
      if (!op || typeof op !== "object") continue;
      list.push({
        ...op,
        method,
        path,
        webhook,
        parameters: mergeParameters(doc, item.parameters, op.parameters),
        security: op.security ?? doc.security ?? [],
      });
    }
  }
  return list;
}

/** Every operation of `paths` then `webhooks`, in the document's order, path-level parameters merged in. */
export const operations = (doc) => [...collect(doc, doc.paths, false), ...collect(doc, doc.webhooks, true)];

/**
 * The operations grouped under their first tag, in the order of the document's `tags` (untagged ones last,
 * under "Other"); tags without an operation are left out.
 */
export function operationsByTag(doc) {
  const groups = new Map((doc.tags ?? []).map((tag) => [tag.name, { ...tag, operations: [] }]));
  for (const op of operations(doc)) {
    const name = op.tags?.[0] ?? "Other";
    if (!groups.has(name)) groups.set(name, { name, operations: [] });
    groups.get(name).operations.push(op);
  }
  return [...groups.values()].filter((group) => group.operations.length > 0);
}

/** How a client presents a security scheme, in one line: "Authorization: Bearer <JWT>". */
export function schemeUsage(scheme) {
  if (scheme.type === "http" && String(scheme.scheme).toLowerCase() === "bearer")
    return `Authorization: Bearer <${scheme.bearerFormat ?? "token"}>`;
  if (scheme.type === "http") return `Authorization: ${scheme.scheme} <credentials>`;
  if (scheme.type === "apiKey")
    return `${scheme.name} ${scheme.in === "header" ? "header" : `${scheme.in} parameter`}`;
  if (scheme.type === "oauth2") return "OAuth 2.0";
  if (scheme.type === "openIdConnect") return `OpenID Connect (${scheme.openIdConnectUrl})`;
  return scheme.type ?? "unknown";
}
