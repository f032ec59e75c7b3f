import {
  documentedMedia,
  findOperation,
  isJsonMedia,
  type Json,
  nodeAt,
  type OpenApiDocument,
  pointerOf,
  resolved,
  responseFor,
} from "./openapi-document";
import { documentSchemas } from "./openapi-schemas";

/** One answer as the client saw it; `text` is left out for a stream (its events are checked one by one). */
export type Exchange = { method: string; url: string; status: number; headers: Headers; text?: string };

/** The components/schemas that describe each event's `data`, by event name (the first one present). */
const EVENT_SCHEMAS: Record<string, readonly string[]> = {
  sale: ["Sale"],
  sales: ["SaleList"],
  order: ["Order"],
  stats: ["SaleStats"],
  timeline: ["SaleTimeline", "Timeline"],
};

const parse = (text: string): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
};

/**
 * The contract's answer to a route nobody serves: 404 `{"error": {"code": "NOT_FOUND", "message", "requestId"}}`.
 * It is the only answer a request the document does not describe may get (the server serves nothing
 * the document leaves out); OpenAPI has no way to describe it, so it is spelled out here.
 */
function isNoSuchRoute(ex: Exchange): boolean {
  return ex.status === 404 && isBareError(ex, "NOT_FOUND");
}

/**
 * The contract's operator rule, which no path template can express: anything under `/api/admin/`
 * without the operator token is 401, a path that is not a route included (the document says so in
 * its description).
 */
function isOperatorAreaRefusal(ex: Exchange, pathname: string): boolean {
  return pathname.startsWith("/api/admin/") && ex.status === 401 && isBareError(ex, "UNAUTHENTICATED");
}

/** A body that is exactly `{"error": {"code": code, "message": "…", "requestId": "…"}}`, sent as JSON. */
function isBareError(ex: Exchange, code: string): boolean {
  const body = ex.text !== undefined ? parse(ex.text) : { ok: false as const };
  if (!body.ok || !isJsonMedia(ex.headers.get("content-type") ?? "")) return false;
  const error = (body.value as { error?: Json } | null)?.error;
  return (
    Object.keys(body.value as Json).join() === "error" &&
    Object.keys(error ?? {})
      .sort()
      .join() === "code,message,requestId" &&
    error?.code === code &&
    typeof error.message === "string" &&
    typeof error.requestId === "string"
  );
}

/**
 * What one OpenAPI document promises, as checks on the answers a client gets: the operation (method
 * and path template) is documented, the status is one of its responses, the Content-Type one of that
 * response's media types, a JSON body valid against its schema, required headers present and every
 * documented header valid against its schema. Stream events are checked by name (see EVENT_SCHEMAS).
 *
 * @example
 * const contract = contractOf(doc);
 * contract.problems({ method: "GET", url, status: 200, headers, text }); // [] when it holds
 */
export function contractOf(doc: OpenApiDocument) {
  const schemas = documentSchemas(doc);

  function problems(ex: Exchange): string[] {
    const { pathname } = new URL(ex.url);
    const op = findOperation(doc, ex.method, pathname);
    if (!op) {
      if (isNoSuchRoute(ex) || isOperatorAreaRefusal(ex, pathname)) return [];
      return [
        `${ex.method.toUpperCase()} ${pathname} is not in the document: only 404 NOT_FOUND (or 401 under /api/admin/) may answer it, not ${ex.status}`,
      ];
    }
    const response = responseFor(doc, op, ex.status);
    if (!response) {
      const documented = Object.keys((op.node.responses ?? {}) as Json).join(", ");
      return [
        `status ${ex.status} is not documented for ${op.method} ${op.template} (documented: ${documented})`,
      ];
    }
    const found = headerProblems(response.node, response.pointer, ex.headers);
    const content = (response.node.content ?? {}) as Json;
    if (Object.keys(content).length === 0)
      return ex.text ? [...found, "the document says this response has no body, but it has one"] : found;
    const contentType = ex.headers.get("content-type");
    const media = documentedMedia(content, contentType);
    if (!media)
      return [
        ...found,
        `Content-Type ${contentType} is not documented (documented: ${Object.keys(content)})`,
      ];
    const schema = `${response.pointer}${pointerOf("content", media, "schema")}`;
    if (ex.text === undefined || !isJsonMedia(media) || nodeAt(doc, schema) === undefined) return found;
    const body = parse(ex.text);
    if (!body.ok) return [...found, "the body is not JSON"];
    const verdict = schemas.verdict(schema, body.value);
    return verdict ? [...found, `the body does not match the documented schema:\n${verdict}`] : found;
  }

  function headerProblems(response: Json, pointer: string, headers: Headers): string[] {
    return Object.keys((response.headers ?? {}) as Json).flatMap((name) => {
      if (name.toLowerCase() === "content-type") return [];
      const { node: header, pointer: at } = resolved(doc, `${pointer}${pointerOf("headers", name)}`);
      const value = headers.get(name);
      if (value === null) return header.required === true ? [`the required header ${name} is missing`] : [];
      if (!header.schema) return [];
      const verdict = schemas.verdict(`${at}/schema`, value);
      const asNumber = value.trim() === "" ? Number.NaN : Number(value);
      if (!verdict || (Number.isFinite(asNumber) && schemas.valid(`${at}/schema`, asNumber))) return [];
      return [`header ${name}: ${JSON.stringify(value)} does not match its schema:\n${verdict}`];
    });
  }

  /** Problems of one stream event's data, by its name; none when the document has no schema for it. */
  function eventProblems(event: string, data: string): string[] {
    const schemasByName = (doc.components?.schemas ?? {}) as Json;
    const name = (EVENT_SCHEMAS[event] ?? []).find((n) => n in schemasByName);
    if (!name) return [];
    const body = parse(data);
    if (!body.ok) return [`the data of a "${event}" event is not JSON`];
    const verdict = schemas.verdict(pointerOf("components", "schemas", name), body.value);
    return verdict ? [`the data of a "${event}" event does not match ${name}:\n${verdict}`] : [];
  }

  return { problems, eventProblems };
}

export type Contract = ReturnType<typeof contractOf>;
