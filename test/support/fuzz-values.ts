/**
 * The fuzz's raw material, as fast-check arbitraries: odd strings, extreme numbers, any JSON and broken
 * JSON text, content types, invalid UTF-8, oversized bodies and bad bearer headers. The requests of
 * fuzz-requests.ts are built from these.
 */
import fc from "fast-check";

export const weird = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "💥".repeat(50),
    "../../etc/passwd",
    "%00",
    "%2e%2e%2f",
    "\u202e",
    "null",
    "{}",
  ),
);
export const hugeNumber = fc.constantFrom(
  1e308,
  -1e308,
  2 ** 53 + 1,
  Number.MAX_SAFE_INTEGER,
  -0,
  1e21,
  10_001,
  0,
  -1,
  1.5,
  Number.MIN_VALUE,
);
export const anyJson = fc.jsonValue({ maxDepth: 3 });
export const jsonText = fc.oneof(
  anyJson.map((v) => JSON.stringify(v)),
  fc.constantFrom(
    "{",
    "[",
    '{"quantity":',
    "{'quantity':1}",
    "NaN",
    "undefined",
    '{"quantity":1}}',
    "\ufeff{}",
  ),
  weird,
);
export const contentType = fc.constantFrom(
  "application/json",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/json; charset=utf-16",
  "",
);
export const badUtf8 = fc
  .uint8Array({ minLength: 1, maxLength: 64 })
  .map((b) => Uint8Array.from([0xff, 0xfe, ...b]));
export const oversized = fc
  .integer({ min: 1025, max: 70_000 })
  .map((n) => `{"quantity":1,"pad":"${"x".repeat(n)}"}`);
export const badBearer = fc.oneof(
  fc.constantFrom("", "Bearer", "Bearer null", "Basic dXNlcjpwYXNz", "Bearer eyJhbGciOiJub25lIn0.e30."),
  weird.map((s) => `Bearer ${s}`),
);
/** A path segment: any odd string, percent-encoded (never empty). */
export const segment = weird.map((s) => encodeURIComponent(s) || "x");

/** Order ids: odd strings, a well-formed id of the fuzzed sale, and well-formed ids of no sale. */
export function orderIds(orderIdLike: string): fc.Arbitrary<string> {
  return fc.oneof(weird, fc.constant(orderIdLike), fc.stringMatching(/^s[0-9a-z]{11}-[0-9a-z]{20}$/));
}
