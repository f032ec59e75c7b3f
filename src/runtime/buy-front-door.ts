import { MAX_BUY_BODY_BYTES, MAX_QUANTITY } from "../api/buy-schemas";
import { refusalFromMemory } from "../buy/refusal-from-memory";
import type { ApiError } from "../http/api-error";
import { readBoundedBody } from "../http/read-body";
import { REQUEST_ID_HEADER, requestIdOf } from "../http/request-id";
import { leaveBodyRead } from "../middleware/buy-body-handoff";
import { MAX_HEADER_BYTES } from "../middleware/header-limit";
import { verifyShopperToken } from "../middleware/shopper-token";
import type { Defer, Services } from "../services";

const BEARER = /^Bearer ([A-Za-z0-9_\-.]+)$/;
const BUY_PATH = /^\/api\/buy\/([^/?#]+)$/;
/** The buy's route pattern, as the app's metrics label it. */
const BUY_ROUTE = "/api/buy/:productToken";

/**
 * The security headers every response of the app carries (hono/secure-headers with its defaults, as
 * src/app.ts uses it), for the answers given here before the app runs. A unit test holds this list to
 * what the middleware sets (test/unit/buy-front-door.test.ts).
 */
export const SECURITY_HEADERS: readonly [string, string][] = [
  ["Cross-Origin-Resource-Policy", "same-origin"],
  ["Cross-Origin-Opener-Policy", "same-origin"],
  ["Origin-Agent-Cluster", "?1"],
  ["Referrer-Policy", "no-referrer"],
  ["Strict-Transport-Security", "max-age=15552000; includeSubDomains"],
  ["X-Content-Type-Options", "nosniff"],
  ["X-DNS-Prefetch-Control", "off"],
  ["X-Download-Options", "noopen"],
  ["X-Frame-Options", "SAMEORIGIN"],
  ["X-Permitted-Cross-Domain-Policies", "none"],
  ["X-XSS-Protection", "0"],
];

/** The answers' headers but the request's id, one object a Response copies (from an array, Deno validates each pair: 25 µs). */
const ANSWER_HEADERS = new Headers([["Content-Type", "application/json"], ...SECURITY_HEADERS]);

/** An answer's body around the request's id: `head + requestId + tail` (the id needs no JSON escaping). */
type Answer = { status: number; head: string; tail: string };

/** The error body routes/buy.ts's table renders (src/http/api-error.ts renderError), split where the request's id goes. */
function answer(status: number, code: string, message: string): Answer {
  const body = JSON.stringify({ error: { code, message } });
  return { status, head: `${body.slice(0, -2)},"requestId":"`, tail: '"}}' };
}

/** The two answers, the same bodies routes/buy.ts's table renders, built once but for the request's id. */
const ANSWERS: Record<"unknown_product" | "sold_out", Answer & { code: string }> = {
  unknown_product: {
    ...answer(404, "UNKNOWN_PRODUCT", "No sale is selling this product."),
    code: "UNKNOWN_PRODUCT",
  },
  sold_out: { ...answer(410, "SOLD_OUT", "Sold out: every unit has been reserved."), code: "SOLD_OUT" },
};

/** One answer, with the request's id in its body and its `X-Request-Id` header (the Response's own copy of the headers). */
function respond(answer: Answer, requestId: string): Response {
  const response = new Response(answer.head + requestId + answer.tail, {
    status: answer.status,
    headers: ANSWER_HEADERS,
  });
  response.headers.set(REQUEST_ID_HEADER, requestId);
  return response;
}

/** Whether a request may be one the front door answers: a POST to `/api/buy/:productToken`. */
function buyTokenOf(req: Request): string | null {
  if (req.method !== "POST") return null;
  const url = req.url;
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  const match = BUY_PATH.exec(url.slice(pathStart));
  return match?.[1] ?? null;
}

/**
 * `POST /api/buy/:productToken`'s refusals at the cost of the runtime's floor: the answers a crowd
 * mostly gets (a Bloom miss 404, a sale this process knows sold out 410) decided from memory before
 * the app runs (no routing, no middleware, no context), each a prebuilt body with the app's security
 * headers. It answers only what the app would answer, in the contract's order: headers within the
 * app's limit (else the app's 431), the body read and checked (the route's 400s), the shopper token
 * verified (the route's 401), then the catalog and the sold-out memory (src/buy/refusal-from-memory.ts).
 * Anything else (an Idempotency-Key, a body the schema must judge, a bad token, a token the catalog
 * must look up, a sale not known sold out) resolves null: the app then runs and finds the body read
 * (src/middleware/buy-body-handoff.ts) and the token verified.
 *
 * @example
 * const door = buyFrontDoor(request, services, defer); // null at once when not a buy
 * return door ? door.then((answer) => answer ?? app.fetch(request)) : app.fetch(request);
 */
export function buyFrontDoor(
  req: Request,
  services: () => Services,
  defer: Defer,
): Promise<Response | null> | null {
  const productToken = buyTokenOf(req);
  // not a buy (every other request pays one regular expression here), or a token to decode: the app's
  if (productToken === null || productToken.includes("%")) return null;
  return refuseFromMemory(req, productToken, services, defer).catch(() => null);
}

/** The front door's work; anything it cannot decide, or that fails, is the app's (it answers or renders the error). */
async function refuseFromMemory(
  req: Request,
  productToken: string,
  servicesOf: () => Services,
  defer: Defer,
): Promise<Response | null> {
  const started = performance.now();
  const headers = req.headers;
  if (headers.has("Idempotency-Key")) return null;
  const length = headers.get("Content-Length");
  // a chunked body, or one the route refuses for its size, is the app's
  if (length === null || !/^\d{1,4}$/.test(length) || Number(length) > MAX_BUY_BODY_BYTES) return null;
  let headerBytes = 0;
  for (const [name, value] of headers) headerBytes += name.length + value.length + 4;
  if (headerBytes > MAX_HEADER_BYTES) return null;
  let text: string;
  try {
    text = await readBoundedBody(req, MAX_BUY_BODY_BYTES);
  } catch (error) {
    leaveBodyRead(req, { error: error as ApiError });
    return null;
  }
  leaveBodyRead(req, { text });
  if (text !== "" && !plainQuantity(parseOrUndefined(text))) return null;
  const token = BEARER.exec(headers.get("Authorization") ?? "")?.[1];
  if (!token) return null;
  const services = servicesOf();
  const now = services.clock();
  const verdict = verifyShopperToken(
    token,
    services.config,
    services.memory.verifiedTokens,
    Math.floor(now / 1000),
  );
  if (!verdict.ok) return null;
  const { config, memory, redis } = services;
  const refused = refusalFromMemory({ config, memory, redis, defer }, productToken, now, {
    admitted: headers.has("Admission"),
  });
  if (!refused) return null;
  const given = ANSWERS[refused];
  // counted as the app counts its answers (src/app.ts), so /metrics sees every buy
  services.metrics?.request(BUY_ROUTE, "POST", given.status, (performance.now() - started) / 1000);
  services.metrics?.buyOutcome(given.code);
  return respond(given, requestIdOf(headers.get(REQUEST_ID_HEADER)));
}

/**
 * A body buyBodySchema accepts as it stands, checked without zod: an object (not an array) whose
 * `quantity` is absent or an integer from 1 to MAX_QUANTITY, naming no variant and no cart (other
 * fields are ignored, as the schema strips them). Anything else goes to the route, whose validator answers it.
 */
function plainQuantity(body: unknown): boolean {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  // a variant or a cart is checked against the sale's variants: the app's
  if ("variantId" in body || "items" in body) return false;
  const q = (body as { quantity?: unknown }).quantity;
  return q === undefined || (Number.isSafeInteger(q) && (q as number) >= 1 && (q as number) <= MAX_QUANTITY);
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
