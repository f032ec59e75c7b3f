import fc from "fast-check";
import { type Json, type OpenApiDocument, pointerOf, resolved } from "./openapi-document";
import type { DocumentSchemas } from "./openapi-schemas";

/**
 * Values that break one schema of an OpenAPI document, drawn from what the schema says: every other
 * JSON type, one past `minimum` / `maximum`, a fraction where an integer is asked, one character past
 * `maxLength` or short of `minLength`, a string outside `enum` or the `pattern`, a bad `format`; and
 * random JSON that the schema refuses. Every value is checked invalid (after a JSON round trip) by the
 * document's own validator, so a request built from it must be refused by a server that keeps to it.
 *
 * @example
 * const quantity = violations(doc, schemas, "/components/schemas/BuyRequest/properties/quantity");
 * fc.sample(quantity!, 3); // e.g. [0, "x", 10001]
 */
const roundTrip = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

const OTHER_TYPES: Record<string, unknown> = {
  string: "x",
  number: 1.5,
  integer: 7,
  boolean: true,
  null: null,
  object: { junk: 1 },
  array: [1],
};

/** Strings that break patterns and formats: blanks, control and bidi characters, paths, escapes, emoji. */
export const JUNK_STRINGS = [
  "",
  " ",
  "x y",
  "\u0000",
  "\u202e",
  "💥".repeat(50),
  "../../etc/passwd",
  "%00",
  "null",
  "{}",
  "x".repeat(300),
] as const;

/** The deterministic candidates the schema at `pointer` suggests (not yet checked). */
function candidates(doc: OpenApiDocument, pointer: string): unknown[] {
  const { node: s } = resolved(doc, pointer);
  const num = (k: string) => (typeof s[k] === "number" ? (s[k] as number) : undefined);
  const out: unknown[] = Object.values(OTHER_TYPES);
  for (const bound of [num("minimum"), num("exclusiveMinimum")])
    if (bound !== undefined) out.push(bound - 1, bound);
  for (const bound of [num("maximum"), num("exclusiveMaximum")])
    if (bound !== undefined) out.push(bound + 1, bound);
  out.push((num("minimum") ?? 1) + 0.5, 2 ** 53 + 2, -1e308, 1e308, -1, 0);
  const maxLength = num("maxLength");
  const minLength = num("minLength");
  if (maxLength !== undefined) out.push("a".repeat(maxLength + 1));
  if (minLength !== undefined && minLength > 0) out.push("a".repeat(minLength - 1));
  if (Array.isArray(s.enum)) out.push(`not-${String(s.enum[0])}`, String(s.enum[0]).toUpperCase());
  if (typeof s.format === "string") out.push(`not-a-${s.format}`, "2026-13-45T25:61:00Z");
  out.push(...JUNK_STRINGS);
  return out;
}

/** Values that break the schema at `pointer`, or null when the schema takes any JSON value. */
export function violations(
  doc: OpenApiDocument,
  schemas: DocumentSchemas,
  pointer: string,
): fc.Arbitrary<unknown> | null {
  const invalid = (v: unknown) => !schemas.valid(pointer, roundTrip(v));
  const fixed = [...new Set(candidates(doc, pointer))].filter(invalid);
  if (fixed.length === 0) return null;
  const fallback = fixed[0];
  const random = fc.jsonValue({ maxDepth: 2 }).map((v) => (invalid(v) ? v : fallback));
  return fc.oneof({ arbitrary: fc.constantFrom(...fixed), weight: 3 }, { arbitrary: random, weight: 1 });
}

/**
 * Strings that break a parameter's schema as a server reads it (a number or boolean parameter's text
 * is its value), made sendable by `clean` first (a header value is trimmed and Latin-1 by then).
 */
export function paramViolations(
  doc: OpenApiDocument,
  schemas: DocumentSchemas,
  pointer: string,
  clean: (s: string) => string,
): fc.Arbitrary<string> | null {
  const accepts = (s: string) =>
    schemas.valid(pointer, s) ||
    (s.trim() !== "" && Number.isFinite(Number(s)) && schemas.valid(pointer, Number(s))) ||
    ((s === "true" || s === "false") && schemas.valid(pointer, s === "true"));
  const sendable = (s: string) => s !== "" && s !== "." && s !== "..";
  const fixed = [
    ...new Set(candidates(doc, pointer).map((v) => clean(typeof v === "string" ? v : JSON.stringify(v)))),
  ]
    .filter(sendable)
    .filter((s) => !accepts(s));
  if (fixed.length === 0) return null;
  const fallback = fixed[0] as string;
  const random = fc.string({ unit: "grapheme", maxLength: 40 }).map((v) => {
    const s = clean(v);
    return sendable(s) && !accepts(s) ? s : fallback;
  });
  return fc.oneof({ arbitrary: fc.constantFrom(...fixed), weight: 3 }, { arbitrary: random, weight: 1 });
}

/** A value the schema at `pointer` is likely to take: its example, default, const, first enum, or one by type. */
export function sampleValue(doc: OpenApiDocument, pointer: string): unknown {
  const { node: s, pointer: at } = resolved(doc, pointer);
  if ("example" in s) return s.example;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if ("default" in s) return s.default;
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === "object" || s.properties) {
    const properties = (s.properties ?? {}) as Json;
    return Object.fromEntries(
      Object.keys(properties).map((k) => [k, sampleValue(doc, `${at}${pointerOf("properties", k)}`)]),
    );
  }
  if (type === "array") return [];
  if (type === "integer" || type === "number") return typeof s.minimum === "number" ? s.minimum : 1;
  if (type === "boolean") return true;
  if (s.format === "date-time") return new Date(Date.now() + 60_000).toISOString();
  return "x";
}
