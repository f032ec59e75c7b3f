import fc from "fast-check";
import type { FuzzRequest } from "./fuzz-requests";
import {
  type Json,
  type OpenApiDocument,
  type Operation,
  operations,
  pointerOf,
  resolved,
} from "./openapi-document";
import type { DocumentSchemas } from "./openapi-schemas";
import { paramViolations, sampleValue, violations } from "./schema-violations";

export type SchemaFuzzContext = {
  /** Valid values of path parameters by name (`saleId`, `productToken`, `orderId`). */
  params: Record<string, string>;
  /** The Authorization header for each bearer security scheme by name (`shopperJwt`, `operatorToken`). */
  bearer: Record<string, string>;
  /** Makes a header value sendable (Latin-1, no line breaks), as the generic fuzz does. */
  cleanHeader(value: string): string;
};

type Param = { name: string; in: string; required: boolean; schema: string };

/** A request of `op` with everything valid (credentials included) but what a variant then breaks. */
type Base = { path: Record<string, string>; query: Record<string, string>; headers: Record<string, string> };

/**
 * Malformed requests drawn from the document's request schemas, one violation each: a path, query or
 * header parameter that breaks its schema (or a required one left out), and a JSON body with one
 * property broken (see schema-violations.ts), a required property missing, a junk property where none
 * may be added, or no object at all. Everything else is valid, credentials included (a QStash route's
 * request is signed), so it is the schema check, and nothing else, that must refuse the request.
 *
 * @example
 * fc.sample(schemaFuzzRequests(doc, schemas, ctx)!, 100);
 */
export function schemaFuzzRequests(
  doc: OpenApiDocument,
  schemas: DocumentSchemas,
  ctx: SchemaFuzzContext,
): fc.Arbitrary<FuzzRequest> | null {
  const perOperation = operations(doc)
    .map((op) => operationViolations(doc, schemas, ctx, op))
    .filter((a): a is fc.Arbitrary<FuzzRequest> => a !== null);
  return perOperation.length === 0 ? null : fc.oneof(...perOperation);
}

function parametersOf(doc: OpenApiDocument, op: Operation): Param[] {
  const pathItem = op.pointer.slice(0, op.pointer.lastIndexOf("/"));
  const lists = [`${pathItem}/parameters`, `${op.pointer}/parameters`];
  const byKey = new Map<string, Param>();
  for (const list of lists) {
    const entries = (resolvedOrNull(doc, list) ?? []) as unknown[];
    entries.forEach((_, i) => {
      const { node, pointer } = resolved(doc, `${list}/${i}`);
      if (typeof node.name !== "string" || typeof node.in !== "string" || !node.schema) return;
      const param = {
        name: node.name,
        in: node.in,
        required: node.required === true,
        schema: `${pointer}/schema`,
      };
      byKey.set(`${param.in}:${param.name.toLowerCase()}`, param);
    });
  }
  return [...byKey.values()].filter((p) => p.in !== "cookie");
}

function resolvedOrNull(doc: OpenApiDocument, pointer: string): unknown {
  try {
    return resolved(doc, pointer).node;
  } catch {
    return null;
  }
}

function operationViolations(
  doc: OpenApiDocument,
  schemas: DocumentSchemas,
  ctx: SchemaFuzzContext,
  op: Operation,
): fc.Arbitrary<FuzzRequest> | null {
  const params = parametersOf(doc, op);
  const base: Base = { path: {}, query: {}, headers: {} };
  for (const p of params) {
    const valid = ctx.params[p.name] ?? String(sampleValue(doc, p.schema));
    if (p.in === "path") base.path[p.name] = valid;
    else if (p.required) (p.in === "query" ? base.query : base.headers)[p.name] = valid;
  }
  const security = ((op.node.security ?? doc.security ?? []) as Json[])[0] ?? {};
  const scheme = Object.keys(security)[0];
  const bearer = scheme ? ctx.bearer[scheme] : undefined;
  if (bearer) base.headers.Authorization = bearer;
  const signJob = scheme === "qstashSignature";
  const bodySchema = `${op.pointer}${pointerOf("requestBody", "content", "application/json", "schema")}`;
  const hasBody = resolvedOrNull(doc, bodySchema) !== null;
  const validBody = hasBody ? sampleValue(doc, bodySchema) : undefined;

  const request = (label: string, b: Base, body: unknown = validBody): FuzzRequest => {
    const path = op.template.replace(/\{([^}]+)\}/g, (_, name: string) =>
      encodeURIComponent(b.path[name] ?? "x"),
    );
    const query = new URLSearchParams(b.query).toString();
    return {
      label: `schema ${op.method.toUpperCase()} ${op.template} ${label}`,
      method: op.method.toUpperCase(),
      path: query ? `${path}?${query}` : path,
      headers: { ...b.headers, ...(hasBody ? { "Content-Type": "application/json" } : {}) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(signJob ? { signJob: true } : {}),
    };
  };

  const variants: fc.Arbitrary<FuzzRequest>[] = [];
  for (const p of params) {
    const place = p.in === "path" ? "path" : p.in === "query" ? "query" : "headers";
    const clean = p.in === "header" ? (s: string) => ctx.cleanHeader(s).trim() : (s: string) => s;
    const bad = paramViolations(doc, schemas, p.schema, clean);
    if (bad)
      variants.push(
        bad.map((v) => request(`${p.in} ${p.name}`, { ...base, [place]: { ...base[place], [p.name]: v } })),
      );
    if (p.required && p.in !== "path") {
      const { [p.name]: _, ...rest } = base[place];
      variants.push(fc.constant(request(`${p.in} ${p.name} missing`, { ...base, [place]: rest })));
    }
  }
  if (hasBody)
    variants.push(...bodyViolations(doc, schemas, bodySchema, validBody, (l, b) => request(l, base, b)));
  return variants.length === 0 ? null : fc.oneof(...variants);
}

function bodyViolations(
  doc: OpenApiDocument,
  schemas: DocumentSchemas,
  pointer: string,
  valid: unknown,
  request: (label: string, body: unknown) => FuzzRequest,
): fc.Arbitrary<FuzzRequest>[] {
  const invalid = (body: unknown) => !schemas.valid(pointer, JSON.parse(JSON.stringify(body)));
  const { node: schema, pointer: at } = resolved(doc, pointer);
  const base = (valid && typeof valid === "object" && !Array.isArray(valid) ? valid : {}) as Json;
  const properties = Object.keys((schema.properties ?? {}) as Json);
  const whole: [string, unknown][] = [
    ["body not an object", []],
    ["body not an object", "x"],
    ["body not an object", 7],
    ["body not an object", null],
    ...((Array.isArray(schema.required) ? schema.required : []) as string[]).map((k): [string, unknown] => {
      const { [k]: _, ...rest } = base;
      return [`body missing ${k}`, rest];
    }),
    ["body junk property", { ...base, junk: "x" }],
  ];
  const fixed = whole.filter(([, body]) => invalid(body));
  const fallback = fixed[0];
  if (!fallback) return [];
  const variants = [fc.constantFrom(...fixed.map(([label, body]) => request(label, body)))];
  for (const key of properties) {
    const bad = violations(doc, schemas, `${at}${pointerOf("properties", key)}`);
    if (!bad) continue;
    variants.push(
      bad.map((v) => {
        const body = { ...base, [key]: v };
        return invalid(body) ? request(`body.${key}`, body) : request(fallback[0], fallback[1]);
      }),
    );
  }
  return variants;
}
