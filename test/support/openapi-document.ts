/**
 * The OpenAPI document as the tests read it: operations found by method and request path, local `$ref`s
 * followed, every node addressed by its JSON pointer (the validators compile schemas by pointer, so the
 * refs inside them resolve against the document itself).
 */
export type Json = Record<string, unknown>;
export type OpenApiDocument = Json & { paths?: Record<string, Json>; components?: Json };

/** A documented operation: `template` as the document writes it, `pointer` to its node. */
export type Operation = { method: string; template: string; pointer: string; node: Json };

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

/** The JSON pointer of a path of keys (`~` and `/` escaped). */
export function pointerOf(...keys: (string | number)[]): string {
  return keys.map((k) => `/${String(k).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
}

/** The node at a JSON pointer (`#/a/b` or `/a/b`), or undefined. */
export function nodeAt(doc: OpenApiDocument, pointer: string): unknown {
  const path = pointer.replace(/^#/, "");
  if (path === "") return doc;
  let node: unknown = doc;
  for (const raw of path.slice(1).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Json)[key];
  }
  return node;
}

/** Follows a chain of local `$ref`s from `pointer` to the node it stands for, and that node's pointer. */
export function resolved(doc: OpenApiDocument, pointer: string): { node: Json; pointer: string } {
  let at = pointer;
  for (let hops = 0; hops < 32; hops++) {
    const node = nodeAt(doc, at);
    if (node === null || typeof node !== "object") throw new Error(`nothing in the document at ${at}`);
    const ref = (node as Json).$ref;
    if (typeof ref !== "string" || !ref.startsWith("#")) return { node: node as Json, pointer: at };
    at = ref.slice(1);
  }
  throw new Error(`$ref cycle at ${pointer}`);
}

function templateRegex(template: string): RegExp {
  const parts = template.split(/\{[^}]+\}/).map((p) => p.replace(/[.*+?^$()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join("[^/]+")}$`);
}

/** The path as routers match it: percent-escapes decoded except those of reserved characters (`%2F`). */
const routedPath = (path: string) => {
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
};

/** The documented path templates matching a request path, the most literal first. */
export function templatesFor(doc: OpenApiDocument, pathname: string): string[] {
  const routed = routedPath(pathname);
  const params = (t: string) => t.split("{").length;
  return Object.keys(doc.paths ?? {})
    .filter((t) => templateRegex(t).test(pathname) || templateRegex(t).test(routed))
    .sort((a, b) => params(a) - params(b) || b.length - a.length);
}

/** The operation answering `method` on `pathname`, or null when the document describes none. */
export function findOperation(doc: OpenApiDocument, method: string, pathname: string): Operation | null {
  const m = method.toLowerCase();
  for (const template of templatesFor(doc, pathname)) {
    const { node: item, pointer } = resolved(doc, pointerOf("paths", template));
    const node = item[m];
    if (node && typeof node === "object")
      return { method: m, template, pointer: `${pointer}${pointerOf(m)}`, node: node as Json };
  }
  return null;
}

/** Every documented operation. */
export function operations(doc: OpenApiDocument): Operation[] {
  return Object.keys(doc.paths ?? {}).flatMap((template) => {
    const { node: item, pointer } = resolved(doc, pointerOf("paths", template));
    return METHODS.filter((m) => item[m] && typeof item[m] === "object").map((m) => ({
      method: m,
      template,
      pointer: `${pointer}${pointerOf(m)}`,
      node: item[m] as Json,
    }));
  });
}

/** The response entry documenting `status` (exact, then `4XX`-style ranges, then `default`). */
export function responseFor(
  doc: OpenApiDocument,
  op: Operation,
  status: number,
): { node: Json; pointer: string } | null {
  const responses = (op.node.responses ?? {}) as Json;
  const key = [String(status), `${Math.floor(status / 100)}XX`, "default"].find((k) => k in responses);
  return key === undefined ? null : resolved(doc, `${op.pointer}${pointerOf("responses", key)}`);
}

/** The media type of a Content-Type header value (`application/json; charset=UTF-8` → `application/json`). */
export function mediaType(contentType: string | null): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/** The documented media type a Content-Type matches (exact, then `type/*`, then `*\/*`), if any. */
export function documentedMedia(content: Json, contentType: string | null): string | null {
  const actual = mediaType(contentType);
  const keys = Object.keys(content);
  const byLower = (k: string) => keys.find((key) => mediaType(key) === k);
  return byLower(actual) ?? byLower(`${actual.split("/")[0]}/*`) ?? byLower("*/*") ?? null;
}

/** Whether a media type carries JSON (`application/json`, `application/problem+json`, …). */
export const isJsonMedia = (media: string) => /^application\/(.+\+)?json$/.test(mediaType(media));
