import type { MiddlewareHandler } from "hono";
import { MAX_BUY_BODY_BYTES, MAX_QUANTITY } from "../api/buy-schemas";
import { cacheBodyText } from "../api/json-body";
import { refusalFromMemory } from "../buy/refusal-from-memory";
import type { ApiError } from "../errors";
import { readBoundedBody } from "../http/read-body";
import { MAX_HEADER_BYTES } from "../middleware/header-limit";
import { verifyShopperToken } from "../middleware/shopper-token";
import type { Defer, Services } from "../services";

const BEARER = /^Bearer ([A-Za-z0-9_\-.]+)$/;
const BUY_PATH = /^\/api\/buy\/([^/?#]+)$/;

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

/** One Headers object for every answer: a Response copies it (from an array, Deno validates each pair: 25 µs). */
const ANSWER_HEADERS = new Headers([["Content-Type", "application/json"], ...SECURITY_HEADERS]);

type Answer = { status: number; body: string; prototype?: Response };

/**
 * The two answers, the same bodies routes/buy.ts's table renders, built once; on a server runtime each
 * answer is a clone of one prototype Response (under a microsecond on Deno and Bun, against 8 µs for a
 * new one on Deno). workerd cannot share a Response between requests, so there each is new.
 */
const ANSWERS: Record<"unknown_product" | "sold_out", Answer> = {
  unknown_product: {
    status: 404,
    body: JSON.stringify({ error: { code: "UNKNOWN_PRODUCT", message: "No sale is selling this product." } }),
  },
  sold_out: {
    status: 410,
    body: JSON.stringify({ error: { code: "SOLD_OUT", message: "Sold out: every unit has been reserved." } }),
  },
};

function respond(answer: Answer, reuse: boolean): Response {
  if (!reuse) return new Response(answer.body, { status: answer.status, headers: ANSWER_HEADERS });
  answer.prototype ??= new Response(answer.body, { status: answer.status, headers: ANSWER_HEADERS });
  return answer.prototype.clone();
}

/** How a runtime lets the front door answer: `reuseResponses` where a Response may outlive its request. */
export type FrontDoorOptions = { reuseResponses: boolean };

/** The body as the front door read it, left on the request for the app (a symbol: nothing else sees it). */
const BODY_READ = Symbol("buy body read");
type BodyRead = { text: string } | { error: ApiError };
type WithBody = Request & { [BODY_READ]?: BodyRead };

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
 * and the token verified.
 *
 * @example
 * const door = buyFrontDoor(request, services, defer, { reuseResponses: true }); // null at once when not a buy
 * return door ? door.then((answer) => answer ?? app.fetch(request)) : app.fetch(request);
 */
export function buyFrontDoor(
  req: Request,
  services: () => Services,
  defer: Defer,
  options: FrontDoorOptions,
): Promise<Response | null> | null {
  const productToken = buyTokenOf(req);
  // not a buy (every other request pays one regular expression here), or a token to decode: the app's
  if (productToken === null || productToken.includes("%")) return null;
  return refuseFromMemory(req, productToken, services, defer, options).catch(() => null);
}

/** The front door's work; anything it cannot decide, or that fails, is the app's (it answers or renders the error). */
async function refuseFromMemory(
  req: Request,
  productToken: string,
  servicesOf: () => Services,
  defer: Defer,
  options: FrontDoorOptions,
): Promise<Response | null> {
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
    (req as WithBody)[BODY_READ] = { error: error as ApiError };
    return null;
  }
  (req as WithBody)[BODY_READ] = { text };
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
  return respond(ANSWERS[refused], options.reuseResponses);
}

/**
 * In the app, in front of the buy route: hands the route the body the front door read (or its refusal
 * of it), and reads it for a request that did not pass the front door (an Idempotency-Key, a chunked
 * body, a test calling the app directly), so the route's validator finds it either way.
 *
 * @example
 * app.use("/api/buy/:productToken", buyBodyHandoff());
 */
export function buyBodyHandoff(): MiddlewareHandler {
  return async function buyBodyHandoffMiddleware(c, next) {
    const read = (c.req.raw as WithBody)[BODY_READ];
    if (read && "error" in read) throw read.error;
    if (read) cacheBodyText(c.req, read.text.trim() === "" ? "{}" : read.text);
    return next();
  };
}

/**
 * A body buyBodySchema accepts as it stands, checked without zod: an object (not an array) whose
 * `quantity` is absent or an integer from 1 to MAX_QUANTITY (other fields are ignored, as the schema
 * strips them). Anything else goes to the route, whose validator answers it.
 */
function plainQuantity(body: unknown): boolean {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
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
