/**
 * Malformed requests for every route, as fast-check arbitraries: random JSON, wrong types, huge
 * numbers, unicode, oversized bodies, invalid UTF-8, wrong methods and content types, bad tokens and
 * signatures; and, given `fromSchemas`, requests drawn from the OpenAPI document's request schemas (see
 * fuzz-from-schemas.ts). Every request built here must be refused before it can change a store: bodies
 * the buy route would accept go out with a bad shopper token, job bodies are unsigned or malformed,
 * operator bodies are invalid definitions, and schema-drawn requests break their schema.
 */
import fc from "fast-check";

export type FuzzRequest = {
  label: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** a job body to sign as QStash would (with the right key): only shapes the job routes must refuse */
  signJob?: boolean;
};

export type FuzzContext = {
  saleId: string;
  productToken: string;
  shopper: string;
  admin: string;
  orderIdLike: string;
  /** requests breaking the document's request schemas, one violation each */
  fromSchemas?: fc.Arbitrary<FuzzRequest> | null;
};

const weird = fc.oneof(
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
const hugeNumber = fc.constantFrom(
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
const anyJson = fc.jsonValue({ maxDepth: 3 });
const jsonText = fc.oneof(
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
const contentType = fc.constantFrom(
  "application/json",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/json; charset=utf-16",
  "",
);
const badUtf8 = fc
  .uint8Array({ minLength: 1, maxLength: 64 })
  .map((b) => Uint8Array.from([0xff, 0xfe, ...b]));
const oversized = fc
  .integer({ min: 1025, max: 70_000 })
  .map((n) => `{"quantity":1,"pad":"${"x".repeat(n)}"}`);
const badBearer = fc.oneof(
  fc.constantFrom("", "Bearer", "Bearer null", "Basic dXNlcjpwYXNz", "Bearer eyJhbGciOiJub25lIn0.e30."),
  weird.map((s) => `Bearer ${s}`),
);

/** Whether the buy route would accept this body text (then the request must fail auth instead). */
export function buyBodyAccepted(text: string): boolean {
  const decoded = text.replace(/^\ufeff/, "");
  if (decoded.trim() === "") return true;
  try {
    const v = JSON.parse(decoded);
    if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
    if (!("quantity" in v)) return true;
    return Number.isInteger(v.quantity) && v.quantity >= 1 && v.quantity <= 10_000;
  } catch {
    return false;
  }
}

export function fuzzRequests(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const shopper = `Bearer ${ctx.shopper}`;
  const admin = `Bearer ${ctx.admin}`;
  const orderId = fc.oneof(
    weird,
    fc.constant(ctx.orderIdLike),
    fc.stringMatching(/^s[0-9a-z]{11}-[0-9a-z]{20}$/),
  );
  const segment = weird.map((s) => encodeURIComponent(s) || "x");

  const buyBody = fc.oneof(
    jsonText,
    hugeNumber.map((q) => `{"quantity":${JSON.stringify(q)}}`),
    anyJson.map((q) => JSON.stringify({ quantity: q })),
    oversized,
  );
  const buy = fc
    .record({
      body: fc.oneof(buyBody, badUtf8),
      ct: contentType,
      auth: fc.oneof(fc.constant(shopper), badBearer),
    })
    .map(({ body, ct, auth }): FuzzRequest => {
      const accepted = typeof body === "string" && buyBodyAccepted(body);
      return {
        label: "buy body",
        method: "POST",
        path: `/api/buy/${ctx.productToken}`,
        headers: { "Content-Type": ct, Authorization: accepted ? "Bearer not.a.token" : auth },
        body,
      };
    });
  // always invalid, even after fetch trims the header and non-ASCII becomes "?": an inner space or > 128 characters
  const buyKey = fc
    .oneof(
      fc.string({ maxLength: 40 }).map((k) => `k k${k}`),
      fc.stringMatching(/^[a-z0-9]{129,300}$/),
    )
    .map(
      (key): FuzzRequest => ({
        label: "buy idempotency key",
        method: "POST",
        path: `/api/buy/${ctx.productToken}`,
        headers: { "Content-Type": "application/json", Authorization: shopper, "Idempotency-Key": key },
        body: "{}",
      }),
    );
  const buyToken = fc.record({ token: segment, auth: fc.oneof(fc.constant(shopper), badBearer) }).map(
    ({ token, auth }): FuzzRequest => ({
      label: "buy product token",
      method: "POST",
      path: `/api/buy/${token}`,
      headers: { "Content-Type": "application/json", Authorization: auth },
      body: '{"quantity":1}',
    }),
  );
  const orders = fc
    .record({
      id: orderId,
      action: fc.constantFrom("", "/pay", "/cancel", "/refund", "/../pay"),
      auth: fc.oneof(fc.constant(shopper), badBearer),
      body: fc.option(fc.oneof(jsonText, oversized, badUtf8)),
    })
    .map(
      ({ id, action, auth, body }): FuzzRequest => ({
        label: `order${action || " get"}`,
        method: action ? "POST" : "GET",
        path: `/api/orders/${encodeURIComponent(id) || "x"}${action}`,
        headers: { Authorization: auth, "Content-Type": "application/json" },
        ...(action && body !== null ? { body } : {}),
      }),
    );
  const invalidSale = anyJson.map((v) => ({
    ...(typeof v === "object" && v !== null && !Array.isArray(v) ? v : { v }),
    stock: "lots",
  }));
  const adminBody = fc
    .record({
      route: fc.constantFrom("/sales", `/sales/${ctx.saleId}/stock`, `/sales/${ctx.saleId}/stock`),
      body: fc.oneof(
        invalidSale.map((v) => JSON.stringify(v)),
        hugeNumber
          .filter((d) => !Number.isInteger(d) || d === 0 || Math.abs(d) > 10_000_000)
          .map((d) => `{"delta":${JSON.stringify(d)}}`),
        anyJson.filter((v) => typeof v !== "number").map((d) => JSON.stringify({ delta: d })),
        fc.constantFrom("{", "[]", '"x"', "x".repeat(20_000)),
      ),
      ct: contentType,
    })
    .map(
      ({ route, body, ct }): FuzzRequest => ({
        label: `admin ${route.includes("stock") ? "stock" : "create"} body`,
        method: "POST",
        path: `/api/admin${route}`,
        headers: { Authorization: admin, "Content-Type": ct },
        body,
      }),
    );
  const adminAuth = fc
    .record({
      route: fc.constantFrom(
        "/sales",
        `/sales/${ctx.saleId}`,
        `/sales/${ctx.saleId}/pause`,
        `/sales/${ctx.saleId}/reconcile`,
        `/sales/${ctx.saleId}/stock`,
        "/dead-letters",
      ),
      method: fc.constantFrom("GET", "POST"),
      auth: badBearer,
    })
    .map(
      ({ route, method, auth }): FuzzRequest => ({
        label: "admin auth",
        method,
        path: `/api/admin${route}`,
        headers: { Authorization: auth, "Content-Type": "application/json" },
        ...(method === "POST" ? { body: '{"delta":5}' } : {}),
      }),
    );
  const adminUnknown = segment.map(
    (id): FuzzRequest => ({
      label: "admin unknown sale",
      method: "GET",
      path: `/api/admin/sales/${id}/stats`,
      headers: { Authorization: admin },
    }),
  );
  const jobShape = fc.oneof(
    anyJson.map((v) => JSON.stringify(v)),
    fc.array(anyJson, { maxLength: 3 }).map((orders) => JSON.stringify({ orders })),
    fc
      .record({
        orderId: fc.oneof(orderId, fc.constant(ctx.orderIdLike)),
        saleId: fc.oneof(weird, fc.constant("s000000000000")),
        userId: fc.oneof(fc.integer(), fc.constant(null)),
        quantity: fc.oneof(hugeNumber, fc.string()),
      })
      .map((j) => JSON.stringify(j)),
    jsonText,
  );
  const jobs = fc
    .record({
      route: fc.constantFrom("order-write", "payment-timeout", "failed", "nope"),
      body: jobShape,
      signature: fc.oneof(fc.constant(null), weird, fc.constant("sign")),
    })
    .map(
      ({ route, body, signature }): FuzzRequest => ({
        label: `job ${route}${signature === "sign" ? " signed" : ""}`,
        method: "POST",
        path: `/api/jobs/${route}`,
        headers: {
          "Content-Type": "application/json",
          ...(signature && signature !== "sign" ? { "Upstash-Signature": safeHeader(signature) } : {}),
        },
        body,
        // a signed failure callback is any object QStash sends: it would be recorded, so it is not signed here
        signJob: signature === "sign" && route !== "failed",
      }),
    );
  const wrongMethod = fc
    .record({
      method: fc.constantFrom("PUT", "DELETE", "PATCH", "OPTIONS"),
      path: fc.constantFrom(
        `/api/buy/${ctx.productToken}`,
        `/api/orders/${ctx.orderIdLike}`,
        `/api/orders/${ctx.orderIdLike}/pay`,
        "/api/sales",
        `/api/admin/sales/${ctx.saleId}`,
        "/api/jobs/order-write",
        "/api/health",
        "/api/dev/login",
      ),
      auth: fc.constantFrom(shopper, admin, ""),
    })
    .map(
      ({ method, path, auth }): FuzzRequest => ({
        label: `wrong method ${method}`,
        method,
        path,
        headers: { Authorization: auth },
        body: "{}",
      }),
    );
  const randomPath = fc.record({ a: segment, b: fc.option(segment) }).map(
    ({ a, b }): FuzzRequest => ({
      label: "random path",
      method: "GET",
      path: `/api/${a}${b ? `/${b}` : ""}`,
      headers: {},
    }),
  );
  const sales = segment.map(
    (id): FuzzRequest => ({ label: "sale by id", method: "GET", path: `/api/sales/${id}`, headers: {} }),
  );
  const dev = jsonText.map(
    (body): FuzzRequest => ({
      label: "dev login (disabled)",
      method: "POST",
      path: "/api/dev/login",
      headers: { "Content-Type": "application/json" },
      body,
    }),
  );

  return fc
    .oneof(
      { arbitrary: buy, weight: 4 },
      { arbitrary: buyKey, weight: 1 },
      { arbitrary: buyToken, weight: 2 },
      { arbitrary: orders, weight: 3 },
      { arbitrary: adminBody, weight: 2 },
      { arbitrary: adminAuth, weight: 1 },
      { arbitrary: adminUnknown, weight: 1 },
      { arbitrary: jobs, weight: 3 },
      { arbitrary: wrongMethod, weight: 1 },
      { arbitrary: randomPath, weight: 1 },
      { arbitrary: sales, weight: 1 },
      { arbitrary: dev, weight: 1 },
      ...(ctx.fromSchemas ? [{ arbitrary: ctx.fromSchemas, weight: 9 }] : []),
    )
    .map((req) => ({
      ...req,
      headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, safeHeader(v, true)])),
    }));
}

/** A header value fetch accepts (Latin-1, no line breaks). */
export function safeHeader(value: string, emptyOk = false): string {
  const cleaned = value.replace(/[^\x20-\x7e]/g, "?");
  return cleaned || (emptyOk ? "" : "x");
}
